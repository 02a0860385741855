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
    try await withAttempts(path: path, options, method, policies) { call in
      var state = RetryState(policy)
      while true {
        let stream = try startAttempt(&call, framed, oneResponse: true)
        let (messages, outcome, head) = try await run(stream) { await stream.awaitEnd() }
        guard case .failure(let error) = outcome else {
          policies.throttle?.recordSuccess()
          return try Self.single(messages, outcome, head, stream, deserializer)
        }
        switch state.afterFailure(error, committed: head != nil, throttle: policies.throttle) {
        case .fail(let why):
          if call.started > 1 || head == nil { logFinalAttempt(path, call.started, error, why) }
          throw error
        case .retry(let delay):
          try await retry(call, after: error, delay)
        }
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
    try await withAttempts(path: path, options, method, policies) { call in
      var state = RetryState(policy)
      while true {
        let stream = try startAttempt(&call, framed, oneResponse: false)
        let failed = call.started
        var retry: (delay: Duration, error: RPCError)? = nil
        let result: Result? = try await run(stream) {
          // A6: committed once response headers arrive; a failure before them may be retried.
          _ = try? await stream.initialMetadata()
          let progress = stream.progress
          if progress.head == nil, case .failure(let error)? = progress.outcome {
            switch state.afterFailure(error, committed: false, throttle: policies.throttle) {
            case .retry(let delay):
              retry = (delay, error)
              return nil
            case .fail(let why):
              if failed > 1 { logFinalAttempt(path, failed, error, why) }
            }
          }
          return try await body(stream)
        }
        if let result {
          Self.recordEnd(of: stream, .retry(policy), policies.throttle)
          return (stream, result)
        }
        guard let retry else { preconditionFailure("an attempt neither returned nor retried") }
        try await self.retry(call, after: retry.error, retry.delay)
      }
    }
  }

  /// Tells the throttle how a call committed to `stream` ended: an OK gives a token back; under
  /// a retry policy, one of its retryable codes after the response headers (too late to retry)
  /// takes one.
  static func recordEnd(
    of stream: ClientStream, _ policy: CallPolicies.Policy, _ throttle: RetryThrottle?
  ) {
    guard let throttle else { return }
    switch stream.outcome {
    case .success?: throttle.recordSuccess()
    case .failure(let error)?:
      if case .retry(let retry) = policy, stream.progress.head != nil,
        retry.retryableStatusCodes.contains(error.code)
      {
        throttle.recordFailure()
      }
    case nil: break
    }
  }

  /// Waits `delay` before the next attempt of `call`, whose last attempt failed with `error`
  /// (see ``waitToRetry(_:_:after:)``), logged and counted in `rpc.client.retries`.
  func retry(_ call: CallAttempts, after error: RPCError, _ delay: Duration)
    async throws(RPCError)
  {
    logRetry(call.path, call.started, error, delay)
    call.metrics.retries.increment()
    try await waitToRetry(delay, call, after: error)
  }

  private func logRetry(_ path: String, _ attempt: Int, _ error: RPCError, _ delay: Duration) {
    logger.debug(
      "call attempt failed; retrying per the service config's retry policy",
      metadata: [
        "grpc.path": "\(path)", "grpc.attempt": "\(attempt)", "grpc.status": "\(error.code.name)",
        "grpc.retry_delay_ms": "\(delay / .milliseconds(1))",
      ])
  }

  func logFinalAttempt(_ path: String, _ attempt: Int, _ error: RPCError, _ why: String) {
    logger.debug(
      "call attempt failed; not retried",
      metadata: [
        "grpc.path": "\(path)", "grpc.attempt": "\(attempt)", "grpc.status": "\(error.code.name)",
        "grpc.reason": "\(why)",
      ])
  }
}
