internal import Logging

/// Calls under a service config's retry policy (proposal A6): an attempt that fails with a
/// retryable code before response headers arrived is made again, after a random backoff or the
/// server's pushback, while attempts and the throttle allow. A policy layer above the stream:
/// each attempt is a stream of its own, made as a call without a policy makes its one.
extension GRPCChannel {
  /// A unary call of a method with a retry policy.
  func unaryRetrying<Response: Sendable>(
    path: String, _ framed: [UInt8], _ deserializer: some MessageDeserializer<Response>,
    _ options: CallOptions, _ policy: ServiceConfig.RetryPolicy,
    _ method: ServiceConfig.MethodConfig, _ policies: CallPolicies
  ) async throws -> ClientResponse<Response> {
    let call = CallAttempts(path: path, options: options, method: method)
    var state = RetryState(policy)
    let metrics = policies.metrics(for: path)
    defer { metrics.attempts.record(state.attempts) }
    while true {
      let stream = try makeStream(
        prepareAttempt(call, number: state.attempts - 1), framed, true, oneResponse: true)
      logAttempt(path, state.attempts)
      let (messages, outcome, head) = try await run(stream) { await stream.awaitEnd() }
      guard case .failure(let error) = outcome else {
        policies.throttle?.recordSuccess()
        return try Self.single(messages, outcome, head, stream, deserializer)
      }
      let failed = state.attempts
      switch state.afterFailure(error, committed: head != nil, throttle: policies.throttle) {
      case .fail(let why):
        if failed > 1 || head == nil { logFinalAttempt(path, failed, error, why) }
        throw error
      case .retry(let delay):
        logRetry(path, failed, error, delay)
        metrics.retries.increment()
        try await waitToRetry(delay, call, after: error)
      }
    }
  }

  /// A server-streaming call of a method with a retry policy: each attempt waits for its
  /// response headers (or its end) before `body` sees it; once they arrive the call is
  /// committed, and what follows — messages, a failure — is the caller's.
  func serverStreamingRetrying<Result>(
    path: String, _ framed: [UInt8], _ options: CallOptions, _ policy: ServiceConfig.RetryPolicy,
    _ method: ServiceConfig.MethodConfig, _ policies: CallPolicies,
    _ body: (ClientStream) async throws -> Result
  ) async throws -> (ClientStream, Result) {
    let call = CallAttempts(path: path, options: options, method: method)
    var state = RetryState(policy)
    let metrics = policies.metrics(for: path)
    defer { metrics.attempts.record(state.attempts) }
    while true {
      let stream = try makeStream(
        prepareAttempt(call, number: state.attempts - 1), framed, true, oneResponse: false)
      logAttempt(path, state.attempts)
      var retry: (delay: Duration, error: RPCError, attempt: Int)? = nil
      let result: Result? = try await run(stream) {
        // A6: committed once response headers arrive; a failure before them may be retried.
        _ = try? await stream.initialMetadata()
        let progress = stream.progress
        if progress.head == nil, case .failure(let error)? = progress.outcome {
          let failed = state.attempts
          switch state.afterFailure(error, committed: false, throttle: policies.throttle) {
          case .retry(let delay):
            retry = (delay, error, failed)
            return nil
          case .fail(let why):
            if failed > 1 { logFinalAttempt(path, failed, error, why) }
          }
        }
        return try await body(stream)
      }
      if let result {
        switch stream.outcome {
        case .success?: policies.throttle?.recordSuccess()
        case .failure(let error)?:
          if stream.progress.head != nil, policy.retryableStatusCodes.contains(error.code) {
            policies.throttle?.recordFailure()
          }
        case nil: break
        }
        return (stream, result)
      }
      guard let retry else { preconditionFailure("an attempt neither returned nor retried") }
      logRetry(path, retry.attempt, retry.error, retry.delay)
      metrics.retries.increment()
      try await waitToRetry(retry.delay, call, after: retry.error)
    }
  }

  func logAttempt(_ path: String, _ attempt: Int) {
    pool.logger.debug(
      "call attempt started", metadata: ["grpc.path": "\(path)", "grpc.attempt": "\(attempt)"])
  }

  private func logRetry(_ path: String, _ attempt: Int, _ error: RPCError, _ delay: Duration) {
    pool.logger.debug(
      "call attempt failed; retrying per the service config's retry policy",
      metadata: [
        "grpc.path": "\(path)", "grpc.attempt": "\(attempt)", "grpc.status": "\(error.code.name)",
        "grpc.retry_delay_ms": "\(delay / .milliseconds(1))",
      ])
  }

  func logFinalAttempt(_ path: String, _ attempt: Int, _ error: RPCError, _ why: String) {
    pool.logger.debug(
      "call attempt failed; not retried",
      metadata: [
        "grpc.path": "\(path)", "grpc.attempt": "\(attempt)", "grpc.status": "\(error.code.name)",
        "grpc.reason": "\(why)",
      ])
  }
}
