/// What one HTTP/2 stream does the same way in both roles, held by the role's stream
/// (``ClientStream``: a call; ``ServerStream``: a request to a handler), which adds its policy:
/// whom it hands messages to, what a failure means, and how the connection is told.
///
/// Loop-only, a value inside its stream. It holds the stream's gRPC state (``machine``, with
/// the role's configuration), the inbound hand-off (DATA deframed into complete messages, with
/// the flow-control bytes acknowledged at once and the account of those its messages owe
/// until their reader takes them), whether nghttp2 deferred the body, and the deadline timer.
/// What the loop shares with the reader's and writer's task — the ``StreamMailbox`` — sits
/// under the role's lock; ``StreamRole`` reaches both for what the roles do alike (taking the
/// reader's credit, pulling the body, ending the waiters, releasing what is owed).
struct StreamCore {
  /// The stream's gRPC state: its peer's head, messages and end.
  var machine: StreamStateMachine
  /// Received DATA in, complete messages out.
  var deframer: MessageDeframer
  /// Receive-window bytes of complete messages handed on and not yet acknowledged: each
  /// message's share is acknowledged as its reader takes it, and what is left as the stream
  /// closes (for the connection only, then).
  private(set) var owedBytes = 0
  /// What is owed was released (``releaseOwed()``): the stream closed, and a reader's credit
  /// that comes later was given back with it.
  private(set) var released = false
  /// nghttp2's data provider said "deferred": bytes queued later must resume the body.
  var bodyDeferred = false
  /// The call's deadline, while it is armed.
  var deadlineTimer: TimerID?

  /// A core in `machine`'s first state whose messages may be at most `maxReceiveSize` bytes.
  init(_ machine: StreamStateMachine, maxReceiveSize: Int) {
    self.machine = machine
    deframer = MessageDeframer(maxMessageSize: maxReceiveSize)
  }

  /// The inbound side starts over, its messages now at most `maxReceiveSize` bytes (a server
  /// learns its limit with the request's method; a client's stream sent again whole receives
  /// from scratch); the machine and the timer stay. Nothing may be owed.
  mutating func restartInbound(maxReceiveSize: Int) {
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
  mutating func receive<Message>(
    _ bytes: UnsafeRawBufferPointer,
    as message: (MessageDeframer.Frame, _ owed: Int) -> Message
  ) throws(MessageDeframer.Failure) -> Inbound<Message> {
    try receive(bytes, lending: false) { frame, _, owed in message(frame, owed) }
  }

  /// ``receive(_:as:)``, with the messages whole in `bytes` lent when `lending`
  /// (``MessageDeframer/append(_:lending:_:)``).
  mutating func receive<Message>(
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
  mutating func owe(_ count: Int) {
    owedBytes += count
  }

  /// The stream is over (or starts over): every byte still owed, which the stream
  /// acknowledges for the connection only; nothing is owed afterwards, and a reader's
  /// credit that still comes is not acknowledged again (``creditToAcknowledge(_:)``).
  mutating func releaseOwed() -> Int {
    released = true
    defer { owedBytes = 0 }
    return owedBytes
  }

  /// A reader took messages owing `credit` bytes: how many to acknowledge now — all of them,
  /// or none once the stream released what was owed (they went back with it).
  mutating func creditToAcknowledge(_ credit: Int) -> Int {
    guard credit > 0, !released else { return 0 }
    owedBytes -= credit
    return credit
  }
}
