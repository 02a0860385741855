/// What both roles do alike with what the loop shares with the stream's task: a reader's
/// credit acknowledged, the body pulled for nghttp2's data provider, the waiters ended, what
/// is owed released. The role's part comes through the hooks in the class
/// (``StreamCore/acknowledge(_:streamOpen:)``, ``StreamCore/outboundFinished``,
/// ``StreamCore/bodyEnding()``, ``StreamCore/bodyPulled(_:resume:)``).
///
/// Loop-only, every method here.
extension StreamCore {
  /// A reader took a message owing `owed` bytes straight from the loop (handed to a waiting
  /// reader or an observer): acknowledged now, unless the stream already released them.
  final func readerTook(_ owed: Int) {
    loop.checkInLoop()
    let count = creditToAcknowledge(owed)
    if count > 0 { acknowledge(count, streamOpen: !machine.isClosed) }
  }

  /// The hop the mailbox claimed as readers took messages (``StreamMailbox/takeMessage()``):
  /// acknowledges the credit they gathered since the last one.
  final func acknowledgeReadCredit() {
    readerTook(withLocked { mailbox.takeCredit() })
  }

  /// The body, for nghttp2's one data provider (inside mem_send: ``HTTP2Session``'s
  /// `bodyProvider(for:)`): queued bytes copied into `buffer`, the last once the role's side
  /// is finished (``outboundFinished``, read under the same lock as the pull; the role reads
  /// what follows the last bytes there too: ``bodyEnding()``). The writer the copy made room
  /// for goes to `resume`; then the role has its say (``bodyPulled(_:resume:)``).
  final func pullBody(
    into buffer: UnsafeMutableRawBufferPointer,
    resume: inout [CheckedContinuation<Void, any Error>]
  ) -> BodyPull {
    loop.checkInLoop()
    let (pull, writer) = withLocked {
      let (pull, writer) = mailbox.pull(into: buffer, finished: outboundFinished)
      if case .bytes(_, last: true) = pull { bodyEnding() }
      return (pull, writer)
    }
    if let writer { resume.append(writer) }
    if pull == .deferred { bodyDeferred = true }
    bodyPulled(pull, resume: &resume)
    return pull
  }

  /// Stops the deadline timer, if it is armed.
  final func cancelDeadline() {
    guard let timer = deadlineTimer else { return }
    loop.cancelTimer(timer)
    deadlineTimer = nil
  }

  /// The call ended (`error`: how; nil: it succeeded): under the lock, `settle` records the end
  /// in the role's shared state; then the reader and the writer still waiting are resumed
  /// with it (a reader with the end of the messages after a success, a writer with "the call
  /// has already ended"), outside the lock. Stops the deadline timer. Returns what `settle`
  /// returned.
  final func end<T>(_ error: RPCError?, settle: () -> T) -> T {
    loop.checkInLoop()
    loop.checkOutsideCallbacks()
    cancelDeadline()
    let (reader, writer, settled) = withLocked {
      let settled = settle()
      let (reader, writer) = mailbox.removeWaiters()
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
  final func releaseOwed() {
    loop.checkInLoop()
    acknowledge(takeOwed(), streamOpen: false)
  }
}
