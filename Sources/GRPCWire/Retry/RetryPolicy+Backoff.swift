extension ServiceConfig.RetryPolicy {
  /// The ceiling of the random delay before the retry after `ceiling`'s: times
  /// `backoffMultiplier`, at most `maxBackoff` (A6, "Exponential Backoff").
  func nextCeiling(after ceiling: Duration) -> Duration {
    min(ceiling * backoffMultiplier, maxBackoff)
  }

  /// A delay drawn uniformly from zero to `ceiling`.
  static func delay(upTo ceiling: Duration) -> Duration {
    let nanoseconds =
      ceiling.components.seconds * 1_000_000_000
      + ceiling.components.attoseconds / 1_000_000_000
    guard nanoseconds > 0 else { return .zero }
    return .nanoseconds(Int64.random(in: 0...nanoseconds))
  }
}
