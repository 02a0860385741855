internal import Synchronization

/// A6's retry throttle of one channel (``ServiceConfig/RetryThrottling``): a token count that
/// starts at `maxTokens`; each attempt that fails with a retryable or non-fatal code (or a
/// pushback saying not to retry) takes 1, each call that succeeds gives back `tokenRatio`;
/// while the count is at or below half of `maxTokens`, no retry or hedge starts.
///
/// Counted in thousandths, as A6 asks (`tokenRatio` has three decimals). Any thread.
final class RetryThrottle: Sendable {
  private let tokens: Mutex<Int>
  private let maximum: Int
  private let ratio: Int

  init(_ throttling: ServiceConfig.RetryThrottling) {
    maximum = throttling.maxTokens * 1000
    ratio = Int((throttling.tokenRatio * 1000).rounded(.down))
    tokens = Mutex(maximum)
  }

  /// Whether a retry or a hedge may start now.
  var allowsRetry: Bool { tokens.withLock { $0 } > maximum / 2 }

  /// The token count, in tokens (for logs and tests).
  var tokenCount: Double { Double(tokens.withLock { $0 }) / 1000 }

  func recordFailure() {
    tokens.withLock { $0 = max(0, $0 - 1000) }
  }

  func recordSuccess() {
    tokens.withLock { $0 = min(maximum, $0 + ratio) }
  }
}
