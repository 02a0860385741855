/// The attempts of one call under a retry or hedging policy: the options every attempt is
/// made with (the method config applied once), the call's deadline, which all its attempts and
/// the waits between them share, and how many attempts it has started.
///
/// A value owned by the call's task; made and ended by ``GRPCChannel/withAttempts``.
struct CallAttempts: Sendable {
  let path: String
  let options: CallOptions
  let deadline: ContinuousClock.Instant?
  let metrics: AttemptMetrics
  /// Under a hedging policy (for ``CallAttempt/hedged``).
  let hedging: Bool
  /// Attempts started so far: streams made and their request queued.
  var started = 0

  init(
    path: String, options: CallOptions, method: ServiceConfig.MethodConfig,
    metrics: AttemptMetrics
  ) {
    self.path = path
    self.hedging = method.hedgingPolicy != nil
    self.options = method.applied(to: options)
    self.deadline = self.options.timeout.map { ContinuousClock.now.advanced(by: $0) }
    self.metrics = metrics
  }
}

extension GRPCChannel {
  /// Runs `body` as one call of `path` under `method`'s retry or hedging policy, and records
  /// the attempts it started (`rpc.client.attempts_per_rpc`) however it ends.
  func withAttempts<Result>(
    path: String, _ options: CallOptions, _ method: ServiceConfig.MethodConfig,
    _ policies: CallPolicies, _ body: (inout CallAttempts) async throws -> Result
  ) async throws -> Result {
    var call = CallAttempts(
      path: path, options: options, method: method, metrics: policies.metrics(for: path))
    defer { call.metrics.attempts.record(call.started) }
    return try await body(&call)
  }

  /// The stream of `call`'s next attempt (not launched yet), with the attempt's request fields
  /// and its request so far, `framed` (`finished`: all of it); counted as started and logged at
  /// debug.
  func startAttempt(
    _ call: inout CallAttempts, _ framed: [UInt8], finished: Bool = true, oneResponse: Bool
  ) throws(RPCError) -> ClientStream {
    let stream = try makeStream(
      prepareAttempt(call, number: call.started), framed, finished, oneResponse: oneResponse)
    call.started += 1
    logger.debug(
      "call attempt started",
      metadata: ["grpc.path": "\(call.path)", "grpc.attempt": "\(call.started)"])
    call.options.attemptObserver?(CallAttempt(number: call.started, hedged: call.hedging))
    return stream
  }

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
      compresses: prepared.compresses,
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
