/// The attempts of one call under a retry or hedging policy: the options every attempt is
/// made with (the method config applied once) and the call's deadline, which all its
/// attempts and the waits between them share.
struct CallAttempts {
  let path: String
  let options: CallOptions
  let deadline: ContinuousClock.Instant?

  init(path: String, options: CallOptions, method: ServiceConfig.MethodConfig) {
    self.path = path
    self.options = method.applied(to: options)
    self.deadline = self.options.timeout.map { ContinuousClock.now.advanced(by: $0) }
  }
}

extension GRPCChannel {
  /// The request fields of attempt `number` (from 0) of `call`: the time left of the call's
  /// deadline as its timeout, and `grpc-previous-rpc-attempts` on every attempt after the
  /// first (A6, "Exposed Retry Metadata").
  func prepareAttempt(_ call: CallAttempts, number: Int) throws(RPCError) -> PreparedCall {
    guard number > 0 else { return try prepared(path: call.path, options: call.options) }
    var options = call.options
    if let deadline = call.deadline {
      let left = ContinuousClock.now.duration(to: deadline)
      guard left > .zero else {
        throw RPCError(
          code: .deadlineExceeded,
          message: "the call's deadline passed before its attempt \(number + 1) could start")
      }
      options.timeout = left
    }
    let prepared = try prepared(path: call.path, options: options)
    return PreparedCall(
      headerPrefix: prepared.headerPrefix,
      headers: prepared.headers + [
        HeaderField(name: "grpc-previous-rpc-attempts", value: String(number))
      ],
      timeout: prepared.timeout, maxReceiveSize: prepared.maxReceiveSize,
      maxSendSize: prepared.maxSendSize,
      waitForReady: prepared.waitForReady, carriesCredentials: prepared.carriesCredentials,
      interception: prepared.interception)
  }

  /// Waits `delay` before the next attempt of `call`, whose last attempt failed with `error`.
  /// Throws DEADLINE_EXCEEDED at once when the call's deadline would pass first (naming the
  /// last failure), CANCELLED when the task is cancelled meanwhile.
  func waitToRetry(_ delay: Duration, _ call: CallAttempts, after error: RPCError)
    async throws(RPCError)
  {
    if let deadline = call.deadline, ContinuousClock.now.advanced(by: delay) >= deadline {
      throw RPCError(
        code: .deadlineExceeded,
        message: "the call's deadline would pass before its next attempt; the last one failed "
          + "with \(error)")
    }
    guard delay > .zero else { return }
    do {
      try await Task.sleep(for: delay)
    } catch {
      throw RPCError(
        code: .cancelled, message: "the call's task was cancelled while it waited to retry")
    }
  }
}
