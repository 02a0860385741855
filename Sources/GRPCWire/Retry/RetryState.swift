/// One call under a retry policy (proposal A6): how many attempts it has made and the ceiling
/// of its next backoff, and what to do after an attempt fails.
///
/// A value owned by the call's task. The throttle, shared by the channel's calls, is told of
/// the failures that count against it.
struct RetryState {
  let policy: ServiceConfig.RetryPolicy
  /// Attempts started so far, the first included.
  private(set) var attempts = 1
  private var ceiling: Duration

  init(_ policy: ServiceConfig.RetryPolicy) {
    self.policy = policy
    self.ceiling = policy.initialBackoff
  }

  /// What comes after a failed attempt.
  enum Decision: Equatable {
    /// Start attempt number `attempts + 1` after this delay.
    case retry(after: Duration)
    /// The call fails with the attempt's error, for this reason (for the log).
    case fail(String)
  }

  /// Decides after an attempt failed with `error`; `committed`: response headers had arrived,
  /// so the caller may have seen them (A6: a committed call is never retried).
  mutating func afterFailure(
    _ error: RPCError, committed: Bool, throttle: RetryThrottle?
  ) -> Decision {
    let retryable = policy.retryableStatusCodes.contains(error.code)
    // A6: only retryable codes and a pushback saying "do not retry" count as failures for
    // the throttle; an INVALID_ARGUMENT says nothing about the server's load.
    if retryable || error.retryPushback == .stop { throttle?.recordFailure() }
    if committed { return .fail("response headers had arrived: the call is committed") }
    guard retryable else { return .fail("\(error.code.name) is not a retryable status code") }
    guard attempts < policy.maxAttempts else {
      return .fail("all \(policy.maxAttempts) attempts were made")
    }
    if let throttle, !throttle.allowsRetry {
      return .fail("retries are throttled (\(throttle.tokenCount) tokens left)")
    }
    switch error.retryPushback {
    case .stop?:
      return .fail("the server's pushback said not to retry")
    case .retry(let delay)?:
      // A6: after a pushback, the next backoff starts again from initialBackoff.
      ceiling = policy.initialBackoff
      attempts += 1
      return .retry(after: delay)
    case nil:
      let delay = ServiceConfig.RetryPolicy.delay(upTo: ceiling)
      ceiling = policy.nextCeiling(after: ceiling)
      attempts += 1
      return .retry(after: delay)
    }
  }
}
