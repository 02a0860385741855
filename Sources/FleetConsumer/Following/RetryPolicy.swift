/// When a ``TripModel`` tries again after a failed update, by the error's
/// ``RPCError/category`` (Docs/ErrorTaxonomy.md, "How each category is handled").
///
/// With `n` consecutive failures so far, the exponential step is
/// `min(maximumBackoff, initialBackoff × multiplier^(n−1))`, and then:
/// - `.serverOrNetwork` (UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED, CANCELLED, a dropped
///   connection): that step. Transient; the model recovers by itself.
/// - `.client` (INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED, RESOURCE_EXHAUSTED,
///   UNAUTHENTICATED): the step × `clientErrorSlowdown`, capped at `maximumBackoff` — the
///   Consumer SDK keeps trying, more slowly, though only the integrator can fix the cause.
///   The first UNAUTHENTICATED after a success is the exception: the cached token is dropped
///   and the call retried at once with a fresh one.
/// - `.other` (UNKNOWN, INTERNAL, UNIMPLEMENTED, …): `maximumBackoff`, the longest wait, so a
///   passing server fault heals while a lasting one stays visible.
///
/// Each delay is spread by ±`jitter` (the `.other` delay only downwards) so that many models
/// failing together do not retry together, and is never shorter than a `RetryInfo` delay the
/// server sent. A successful update resets `n`.
public struct RetryPolicy: Sendable, Hashable {
  /// The first server-or-network retry's delay. Default 1 s.
  public var initialBackoff: Duration
  /// The longest delay, and the one used for `.other` errors. Default 60 s.
  public var maximumBackoff: Duration
  /// Growth per consecutive failure. Default 1.6, as gRPC's connection backoff.
  public var multiplier: Double
  /// Relative spread, 0 ..< 1. Default 0.2.
  public var jitter: Double
  /// How many times longer a client error waits than a server-or-network error. Default 4.
  public var clientErrorSlowdown: Double

  /// A policy; the defaults are the ones above.
  public init(
    initialBackoff: Duration = .seconds(1), maximumBackoff: Duration = .seconds(60),
    multiplier: Double = 1.6, jitter: Double = 0.2, clientErrorSlowdown: Double = 4
  ) {
    self.initialBackoff = initialBackoff
    self.maximumBackoff = maximumBackoff
    self.multiplier = multiplier
    self.jitter = jitter
    self.clientErrorSlowdown = clientErrorSlowdown
  }

  /// The wait before the next try after `error`, the `consecutiveFailures`-th failure in a
  /// row (1 for the first); `random` is uniform in 0 ..< 1 and picks the jitter.
  public func delay(after error: RPCError, consecutiveFailures: Int, random: Double) -> Duration {
    let maximum = max(maximumBackoff.seconds, 0)
    let exponent = Double(max(consecutiveFailures, 1) - 1)
    let step = min(maximum, initialBackoff.seconds * pow(max(multiplier, 1), exponent))
    let spread = min(max(jitter, 0), 0.99)
    let seconds: Double
    switch error.category {
    case .serverOrNetwork:
      seconds = step * (1 + spread * (2 * random - 1))
    case .client:
      seconds = min(maximum, step * max(clientErrorSlowdown, 1)) * (1 + spread * (2 * random - 1))
    case .other:
      seconds = maximum * (1 - spread * random)
    }
    let delay = Duration.seconds(max(seconds, 0))
    if let serverDelay = error.retryDelay, serverDelay > delay { return serverDelay }
    return delay
  }
}

extension Duration {
  /// The duration in seconds, as a `Double`.
  var seconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) + Double(attoseconds) / 1e18
  }
}

/// `base` to the power `exponent` for the small exponents of a backoff, without Foundation.
private func pow(_ base: Double, _ exponent: Double) -> Double {
  var result = 1.0
  var remaining = Int(exponent)
  while remaining > 0 && result < 1e12 {
    result *= base
    remaining -= 1
  }
  return result
}
