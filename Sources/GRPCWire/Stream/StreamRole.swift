/// The half of a stream its loop shares with the stream's task (the caller's on a client, the
/// handler's on a server), kept under the role's lock: the mailbox, and the role's outcome.
protocol StreamShared {
  associatedtype Message: MailboxMessage
  /// Received messages for the reader, framed bytes for nghttp2's data provider.
  var mailbox: StreamMailbox<Message> { get set }
  /// Nothing more will be queued to send (a request stream half-closed; a handler's status
  /// set, or the call aborted): the pull that empties the queue is the body's last.
  var outboundFinished: Bool { get }
}

/// A role's stream over its ``StreamCore``: ``ClientStream`` (a call's policy: deadline,
/// transparent retry, the caller or a loop-driven call's driver) and ``ServerStream`` (a
/// handler's: lazy response headers, abort). What the two do alike is written once, here, on
/// the core and the mailbox; the role supplies its lock and its connection's acknowledgement.
///
/// Loop-only, every method here (``StreamCore`` is), except where the role's task reaches the
/// mailbox through ``withShared(_:)``.
protocol StreamRole: AnyObject {
  associatedtype Shared: StreamShared
  var loop: EventLoop { get }
  /// The stream's loop-only state both roles keep alike.
  var core: StreamCore { get set }
  /// Runs `body` on the shared state, under the role's lock (or, for state only the loop
  /// reaches, on the loop thread).
  func withShared<T>(_ body: (inout Shared) -> T) -> T
  /// Acknowledges `count` received bytes of this stream to the peer, for the stream and the
  /// connection while `streamOpen`, else for the connection only.
  func acknowledge(_ count: Int, streamOpen: Bool)
}

extension StreamRole {
  /// A reader took a message owing `owed` bytes straight from the loop (handed to a waiting
  /// reader or an observer): acknowledged now, unless the stream already released them.
  func readerTook(_ owed: Int) {
    loop.checkInLoop()
    let count = core.creditToAcknowledge(owed)
    if count > 0 { acknowledge(count, streamOpen: !core.machine.isClosed) }
  }

  /// The hop the mailbox claimed as readers took messages (``StreamMailbox/takeMessage()``):
  /// acknowledges the credit they gathered since the last one.
  func acknowledgeReadCredit() {
    readerTook(withShared { $0.mailbox.takeCredit() })
  }

  /// The body, for nghttp2's data provider (inside mem_send): queued bytes copied into
  /// `buffer`, the last once the role's side is finished; the writer the copy made room for
  /// goes to `resume`. `end` reads what follows the last bytes (a server's status) under the
  /// same lock.
  func pullQueued<End>(
    into buffer: UnsafeMutableRawBufferPointer,
    resume: inout [CheckedContinuation<Void, any Error>],
    end: (inout Shared) -> End?
  ) -> (pull: BodyPull, end: End?) {
    loop.checkInLoop()
    let (pull, writer, ending) = withShared { s in
      let (pull, writer) = s.mailbox.pull(into: buffer, finished: s.outboundFinished)
      guard case .bytes(_, last: true) = pull else { return (pull, writer, End?.none) }
      return (pull, writer, end(&s))
    }
    if let writer { resume.append(writer) }
    if pull == .deferred { core.bodyDeferred = true }
    return (pull, ending)
  }

  /// Stops the deadline timer, if it is armed.
  func cancelDeadline() {
    guard let timer = core.deadlineTimer else { return }
    loop.cancelTimer(timer)
    core.deadlineTimer = nil
  }

  /// The call ended (`error`: how; nil: it succeeded): under the lock, `settle` records the end
  /// in the role's shared state; then the reader and the writer still waiting are resumed
  /// with it (a reader with the end of the messages after a success, a writer with "the call
  /// has already ended"), outside the lock. Stops the deadline timer. Returns what `settle`
  /// returned.
  func end<T>(_ error: RPCError?, settle: (inout Shared) -> T) -> T {
    loop.checkInLoop()
    loop.checkOutsideCallbacks()
    cancelDeadline()
    let (reader, writer, settled) = withShared { s in
      let settled = settle(&s)
      let (reader, writer) = s.mailbox.removeWaiters()
      return (reader, writer, settled)
    }
    if let reader {
      if let error { reader.resume(throwing: error) } else { reader.resume(returning: nil) }
    }
    writer?.resume(
      throwing: error ?? RPCError(code: .failedPrecondition, message: "the call has already ended"))
    return settled
  }

  /// The stream closed (or starts over): every received byte its messages still owe, read or
  /// not, goes back to the connection.
  func releaseOwed() {
    loop.checkInLoop()
    acknowledge(core.releaseOwed(), streamOpen: false)
  }
}
