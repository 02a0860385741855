internal import FleetSync

/// One HTTP/2 stream, for either role: the one per-stream object, which the role subclasses
/// with its policy — ``ClientStream`` (a call: deadline, transparent retry, the caller or a
/// loop-driven call's driver) and ``ServerStream`` (a request to a handler: lazy response
/// headers, abort). What the two do alike is written once, here and in `StreamCore+Shared`.
///
/// Loop-only (but see ``id``): the stream's ID and session, its gRPC state (``machine``, with
/// the role's configuration), the inbound hand-off (DATA deframed into complete messages, with the
/// flow-control bytes acknowledged at once and the account of those its messages owe until
/// their reader takes them), whether nghttp2 deferred the body, and the deadline timer.
/// Shared with the stream's task (the caller's on a client, the handler's on a server): the
/// ``mailbox`` and the role's outcome, under the stream's lock (``withLocked(_:)``), or, for a
/// stream whose every side runs on the loop (a loop-driven call), on the loop thread only,
/// checked in every build.
///
/// One allocation per stream with its role's state (the role subclasses it), plus the lock.
class StreamCore: @unchecked Sendable {
  // @unchecked Sendable: immutable lets, the mailbox (and the role's shared state) under the
  // lock or loop-confined, and loop-only vars (see above).
  //
  // The loop-only vars' exclusivity is not checked at run time: each DATA chunk, header
  // block and close reads or changes several of them, a runtime check each (about 40 per
  // GetTrip on a client, 2.5 % of its CPU, with the roles' and the connection's). They are
  // touched on the loop only, and no access to one of them spans a call that reaches it
  // again (the deframer's messages are handed on after its append; a role's hooks run after
  // the pull that calls them).

  let loop: EventLoop
  /// The stream's ID: a server's as it begins; a client's once submitted (-1 before), and
  /// again for each retry. Loop-only, with one exception: a server stream's ID is set at init
  /// and never written after, so its handler's task reads it too (``ServerStream``'s writes).
  @exclusivity(unchecked) final var id: Int32
  /// The session the stream is open on: what it acknowledges received bytes, resumes its body
  /// and resets itself through. Strong, not weak (a weak reference gives the session a side
  /// table, after which every retain and release of it takes the runtime's slow path); the
  /// role clears it as the stream closes, where that matters (a client's call may be retried
  /// on another session).
  @exclusivity(unchecked) final var session: HTTP2Session?
  /// nghttp2 closed the stream: received bytes are acknowledged for the connection only.
  @exclusivity(unchecked) final var streamClosed = false
  /// The stream's gRPC state: its peer's head, messages and end.
  @exclusivity(unchecked) final var machine: StreamStateMachine
  /// Received DATA in, complete messages out.
  @exclusivity(unchecked) final var deframer: MessageDeframer
  /// Receive-window bytes of complete messages handed on and not yet acknowledged: each
  /// message's share is acknowledged as its reader takes it, and what is left as the stream
  /// closes (for the connection only, then).
  @exclusivity(unchecked) final private(set) var owedBytes = 0
  /// What is owed was released (``releaseOwed()``): the stream closed, and a reader's credit
  /// that comes later was given back with it.
  @exclusivity(unchecked) final private(set) var released = false
  /// nghttp2's data provider said "deferred": bytes queued later must resume the body.
  @exclusivity(unchecked) final var bodyDeferred = false
  /// The call's deadline, while it is armed.
  @exclusivity(unchecked) final var deadlineTimer: TimerID?

  /// The lock of the mailbox and the role's shared state; nil for a stream whose every side
  /// runs on the loop: it allocates no lock it would never take. It guards a byte, not
  /// `Void`: ThreadSanitizer sees the lock's inout access to a zero-sized value at the start
  /// of the mutex's buffer, which every caller reads unlocked, and reported each stream's
  /// first lock on another thread as a race.
  private let lock: PosixMutex<UInt8>?
  /// Received messages for the reader, framed bytes for nghttp2's data provider. Reached only
  /// inside ``withLocked(_:)``; its exclusivity is not checked at run time (the lock is the
  /// check; a nested `withLocked` would deadlock on it).
  @exclusivity(unchecked) final var mailbox: StreamMailbox

  /// A stream of `loop` in `machine`'s first state whose messages may be at most
  /// `maxReceiveSize` bytes, under a lock unless `loopConfined`; its mailbox is made here from
  /// `outbound`, `keepsSentBytes` and `outboundLimit` (``StreamMailbox``), not copied in.
  init(
    loop: EventLoop, id: Int32, machine: StreamStateMachine, maxReceiveSize: Int,
    outbound: [UInt8] = [], keepsSentBytes: Bool = false, outboundLimit: Int,
    loopConfined: Bool = false
  ) {
    self.loop = loop
    self.id = id
    self.machine = machine
    deframer = MessageDeframer(maxMessageSize: maxReceiveSize)
    mailbox = StreamMailbox(
      outbound: outbound, keepsSentBytes: keepsSentBytes, outboundLimit: outboundLimit)
    lock = loopConfined ? nil : PosixMutex(0)
  }

  /// Runs `body` under the stream's lock, or, for a loop-confined stream, on the loop thread
  /// only, checked in every build. `body` may touch ``mailbox`` and the role's shared state.
  @inline(__always)
  final func withLocked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    guard let lock else {
      loop.preconditionInEventLoop("a loop-driven call's state")
      return try body()
    }
    return try lock.withLock { (_: inout UInt8) throws(E) -> T in try body() }
  }

  // MARK: The role's hooks

  /// Acknowledges `count` received bytes of this stream to the peer through its session: for
  /// the stream and the connection while `streamOpen` and nghttp2 has the stream open, else
  /// for the connection only.
  func acknowledge(_ count: Int, streamOpen: Bool) {
    session?.acknowledge(count, streamID: id, streamOpen: streamOpen && !streamClosed)
  }

  /// Under the lock: nothing more will be queued to send (a request stream half-closed; a
  /// handler's status set, or the call aborted), so the pull that empties the queue is the
  /// body's last.
  var outboundFinished: Bool { false }

  /// Under the lock, as the pull that ends the body is made: the role reads what follows the
  /// body (a server's status).
  func bodyEnding() {}

  /// After each pull of the body (inside mem_send, outside the lock): the role's part (a
  /// server releases its send budget and submits the trailers); writers to resume once
  /// mem_send has returned go to `resume`.
  func bodyPulled(_ pull: BodyPull, resume: inout [CheckedContinuation<Void, any Error>]) {}

  /// The inbound side starts over, its messages now at most `maxReceiveSize` bytes (a server
  /// learns its limit with the request's method; a client's stream sent again whole receives
  /// from scratch); the machine and the timer stay. Nothing may be owed.
  final func restartInbound(maxReceiveSize: Int) {
    deframer = MessageDeframer(maxMessageSize: maxReceiveSize)
    owedBytes = 0
    released = false
    bodyDeferred = false
  }

  /// What one chunk of DATA brought.
  struct Inbound<Message> {
    /// The first message it completed; a chunk nearly always completes exactly one, so the
    /// common case makes no list.
    var first: Message?
    /// The messages after `first`, in order.
    var more: [Message] = []
    /// The chunk's bytes that belong to a message still arriving: acknowledged at once, since
    /// that message cannot complete otherwise (its size is bounded by the receive limit).
    var partialBytes: Int
    /// The chunk's bytes that belong to the messages it completed: each message owes its
    /// share until its reader takes it, so a slow reader holds at most a window of them.
    var owedByMessages: Int
  }

  /// Deframes `bytes`, one chunk of the stream's DATA, making each complete message with
  /// `message` (its frame, and the bytes of it this chunk brought: what it owes). When it
  /// throws, nothing of the chunk is handed on: the stream fails.
  final func receive<Message>(
    _ bytes: UnsafeRawBufferPointer,
    as message: (MessageDeframer.Frame, _ owed: Int) -> Message
  ) throws(MessageDeframer.Failure) -> Inbound<Message> {
    try receive(bytes, lending: false) { frame, _, owed in message(frame, owed) }
  }

  /// ``receive(_:as:)``, with the messages whole in `bytes` lent when `lending`
  /// (``MessageDeframer/append(_:lending:_:)``).
  final func receive<Message>(
    _ bytes: UnsafeRawBufferPointer, lending: Bool,
    as message: (MessageDeframer.Frame, _ lent: UnsafeRawBufferPointer?, _ owed: Int) -> Message
  ) throws(MessageDeframer.Failure) -> Inbound<Message> {
    var first: Message? = nil
    var more: [Message] = []
    let partialBytes = try deframer.append(bytes, lending: lending) { frame, lent, owed in
      let made = message(frame, lent, owed)
      if first == nil { first = made } else { more.append(made) }
    }
    return Inbound(
      first: first, more: more, partialBytes: partialBytes,
      owedByMessages: bytes.count - partialBytes)
  }

  /// Messages whose bytes come to `count` were handed on (``Inbound/owedByMessages``): they
  /// owe them until their reader takes them.
  final func owe(_ count: Int) {
    owedBytes += count
  }

  /// The stream is over (or starts over): every byte still owed, which the stream
  /// acknowledges for the connection only; nothing is owed afterwards, and a reader's
  /// credit that still comes is not acknowledged again (``creditToAcknowledge(_:)``).
  final func takeOwed() -> Int {
    released = true
    defer { owedBytes = 0 }
    return owedBytes
  }

  /// A reader took messages owing `credit` bytes: how many to acknowledge now — all of them,
  /// or none once the stream released what was owed (they went back with it).
  final func creditToAcknowledge(_ credit: Int) -> Int {
    guard credit > 0, !released else { return 0 }
    owedBytes -= credit
    return credit
  }
}
