internal import FleetSync
internal import Logging

/// The caller's side of a call (any thread): writing requests, reading the response's
/// metadata and messages, and cancelling.
extension ClientStream {
  /// Queues one framed request message, suspending while too much is already queued.
  /// Throws the call's error (or CANCELLED-like "call ended") once the call is over.
  func write(_ framed: [UInt8], finish: Bool) async throws {
    if framed.count - MessageFramer.prefixLength > maxSendSize {
      // The call ends with it too (C-core does the same): the server must not see a request
      // stream with a message missing.
      let error = RPCError.requestTooLarge(framed.count - MessageFramer.prefixLength, maxSendSize)
      cancel(error)
      throw error
    }
    let (scheduleResume, full, ended) = withShared { s -> (Bool, Bool, RPCError?) in
      if let outcome = s.outcome { return (false, false, Self.endError(outcome)) }
      guard !s.outboundFinished else {
        return (false, false, RPCError(code: .internalError, message: "write after the request stream was finished"))
      }
      let written = mailbox.write(announce: true) { $0.append(contentsOf: framed) }
      s.outboundFinished = finish
      s.messagesWritten += 1
      return (written.tellLoop, mailbox.unsentCount > Self.outboundLimit, nil)
    }
    if let ended { throw ended }
    if scheduleResume { loop.execute { self.resumeData() } }
    // Under the limit the write is done without suspending.
    guard full else { return }
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
      let resumeNow = withShared { s -> Result<Void, RPCError>? in
        if let outcome = s.outcome { return .failure(Self.endError(outcome)) }
        return mailbox.wait(writer: c, limit: Self.outboundLimit) ? nil : .success(())
      }
      if let resumeNow { c.resume(with: resumeNow) }
    }
  }

  /// Half-closes the request stream (no more messages).
  func finishRequests() {
    let schedule = withShared { s -> Bool in
      guard !s.outboundFinished, s.outcome == nil else { return false }
      s.outboundFinished = true
      return mailbox.claimResumeHop()
    }
    if schedule { loop.execute { self.resumeData() } }
  }

  /// The response headers' metadata; throws the call's error if it ended without them.
  func initialMetadata() async throws -> Metadata {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<Metadata, any Error>) in
      let now = withShared { s -> Result<Metadata, any Error>? in
        if let head = s.head { return .success(head.metadata) }
        if let outcome = s.outcome {
          switch outcome {
          case .success: return .success(Metadata())
          case .failure(let error): return .failure(error)
          }
        }
        s.headWaiters.append(c)
        return nil
      }
      if let now { c.resume(with: now) }
    }
  }

  /// The next response message, nil once the call ended OK; throws the call's error.
  func nextMessage() async throws -> Received? {
    // A message already here (the usual case while a stream runs ahead of its reader) is
    // taken without suspending: no continuation, no hop through the executor.
    let (ready, scheduleCredit) = withShared { s in take(&s) }
    if scheduleCredit { loop.execute { self.acknowledgeReadCredit() } }
    if let ready { return try ready.get() }
    return try await withCheckedThrowingContinuation {
      (c: CheckedContinuation<Received?, any Error>) in
      let (now, scheduleCredit) = withShared { s -> (Result<Received?, any Error>?, Bool) in
        let (now, schedule) = take(&s)
        if now == nil { mailbox.readerWaiting = c }
        return (now, schedule)
      }
      if scheduleCredit { loop.execute { self.acknowledgeReadCredit() } }
      if let now { c.resume(with: now) }
    }
  }

  /// The next buffered message, or the end of the call, or nil when the reader must wait; and
  /// whether read credit is now due back to the loop (at most one such hop is pending).
  func take(_ s: inout Shared) -> (Result<Received?, any Error>?, Bool) {
    if let (received, returnCredit) = mailbox.takeMessage() {
      return (.success(received), returnCredit)
    }
    if let outcome = s.outcome {
      switch outcome {
      case .success: return (.success(nil), false)
      case .failure(let error): return (.failure(error), false)
      }
    }
    return (nil, false)
  }

  /// Waits until the call is over, then returns every message not yet read, the outcome and
  /// the response headers' metadata (nil without response headers): one suspension for a
  /// unary or client-streaming call, however its response arrives. Called once per call.
  ///
  /// The continuation is a checked one. The loop may resume it between its store and the
  /// task's suspension; the runtime then orders the resume before the task goes on by an
  /// atomic of its own (`swift_continuation_await` finds it resumed), with no annotation for
  /// ThreadSanitizer on that path, so an unsafe continuation's resume — inlined here, and
  /// instrumented — was reported racing the task's next write to its frame
  /// (swiftlang/swift#57803). A checked one is resumed inside the runtime.
  nonisolated(nonsending) func awaitEnd() async
    -> (messages: [Received], outcome: CallOutcome, headMetadata: Metadata?)
  {
    await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
      let done = withShared { s -> Bool in
        if s.outcome != nil { return true }
        precondition(s.endWaiter == nil, "awaitEnd called twice on one call")
        s.endWaiter = c
        return false
      }
      if done { c.resume() }
    }
    return takeEnd()
  }

  /// Once the call is over: every message not yet read, the outcome and the response
  /// headers' metadata (see ``awaitEnd()``).
  func takeEnd() -> (messages: [Received], outcome: CallOutcome, headMetadata: Metadata?) {
    withShared { s in
      (mailbox.removeMessages(), s.outcome!, s.head?.metadata)
    }
  }

  /// Once a loop-driven unary call is over (on the loop): its response, if one came (see
  /// ``deliver(_:_:)``), its bytes if they are lent (``unaryLent``), and the outcome.
  func takeUnaryEnd() -> (response: Received?, lent: UnsafeRawBufferPointer?, outcome: CallOutcome)
  {
    loop.checkInLoop()
    let response = unaryResponse
    let lent = unaryLent
    unaryResponse = nil
    unaryLent = nil
    return (response, lent, withShared { s in s.outcome! })
  }

  /// The outcome, once the call is over.
  var outcome: CallOutcome? { withShared { $0.outcome } }

  /// What interceptors learn of the call once the caller is done with it: the response
  /// headers' metadata, the outcome (nil while a reset is on its way), messages written and
  /// responses delivered.
  var progress: (head: Metadata?, outcome: CallOutcome?, written: Int, delivered: Int) {
    withShared { ($0.head?.metadata, $0.outcome, $0.messagesWritten, $0.messagesDelivered) }
  }

  /// Payload bytes of complete responses received but not yet read.
  var bufferedResponseBytes: Int { withLocked { mailbox.bufferedBytes } }

  /// Ends the call from the caller's side (task cancelled, body finished early): resets the
  /// stream with CANCEL unless it is already over.
  func cancel(_ error: RPCError) {
    loop.execute { self.fail(error, reset: true) }
  }

  static func endError(_ outcome: CallOutcome) -> RPCError {
    switch outcome {
    case .success:
      RPCError(code: .failedPrecondition, message: "the call has already ended")
    case .failure(let error): error
    }
  }
}
