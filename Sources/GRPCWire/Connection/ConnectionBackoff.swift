/// gRPC's connection-backoff algorithm (doc/connection-backoff.md):
///
///     current_backoff = INITIAL_BACKOFF
///     current_deadline = now() + INITIAL_BACKOFF
///     while TryConnect(Max(current_deadline, now() + MIN_CONNECT_TIMEOUT)) != SUCCESS:
///       SleepUntil(current_deadline)
///       current_backoff = Min(current_backoff * MULTIPLIER, MAX_BACKOFF)
///       current_deadline = now() + current_backoff ± JITTER * current_backoff
///
/// A value: the pool holds one per target and asks it when to try next.
struct ConnectionBackoff {
  let configuration: ChannelOptions.Backoff
  private var current: Duration
  /// When the attempt in progress may be retried at the earliest.
  private(set) var deadline: MonotonicInstant
  private var random: @Sendable () -> Double
  /// Reset by a success: the next attempt's backoff counts from when it starts.
  private var restartOnNextAttempt = false

  /// `random` yields uniform values in 0..<1 (injectable for tests).
  init(
    _ configuration: ChannelOptions.Backoff, now: MonotonicInstant,
    random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
  ) {
    self.configuration = configuration
    self.current = configuration.initial
    self.deadline = now.advanced(by: configuration.initial)
    self.random = random
  }

  /// An attempt starts `now`: returns its timeout. After a success, the backoff counts from
  /// here (doc/connection-backoff.md: the deadline is set when an attempt begins).
  mutating func startAttempt(now: MonotonicInstant) -> Duration {
    if restartOnNextAttempt {
      restartOnNextAttempt = false
      deadline = now.advanced(by: configuration.initial)
    }
    return connectTimeout(now: now)
  }

  /// The timeout for an attempt starting `now`.
  func connectTimeout(now: MonotonicInstant) -> Duration {
    max(now.duration(to: deadline), configuration.minimumConnectTimeout)
  }

  /// An attempt failed at `now`: returns when the next one should start, and advances.
  mutating func attemptFailed(now: MonotonicInstant) -> MonotonicInstant {
    let retryAt = max(deadline, now)
    current = min(current * configuration.multiplier, configuration.maximum)
    let jitter = current * (configuration.jitter * (2 * random() - 1))
    deadline = retryAt.advanced(by: current + jitter)
    return retryAt
  }

  /// A connection succeeded: the next failure starts from the initial backoff again.
  mutating func reset(now: MonotonicInstant) {
    current = configuration.initial
    deadline = now.advanced(by: configuration.initial)
    restartOnNextAttempt = true
  }
}
