import Synchronization

/// The shared state of one phase (warm-up or measured): when it started, when and how it
/// ends, the pacing clock, and the counters the workers and the progress bar read.
///
/// Workers claim a ``Ticket`` before each call (or round trip) and report each completed unit;
/// the phase stops at the unit limit, at its deadline (seen by ``LoadRunner``'s controller),
/// or when stopped from outside (a signal).
final class LoadPhase: Sendable {
  let start: ContinuousClock.Instant
  let deadline: ContinuousClock.Instant?
  /// Units to complete, for `-n`.
  let limit: Int?
  /// The time between two scheduled sends (`--rps`), nil for a closed loop.
  let interval: Duration?

  private let tickets = Atomic<Int>(0)
  private let units = Atomic<Int>(0)
  private let failures = Atomic<Int>(0)
  /// Nanoseconds from `start` to the first ``stop()``; -1 while the phase runs.
  private let stoppedAfter = Atomic<Int64>(-1)
  private let halted = Atomic<Bool>(false)

  init(
    start: ContinuousClock.Instant, deadline: ContinuousClock.Instant?, limit: Int?, rate: Double?
  ) {
    self.start = start
    self.deadline = deadline
    self.limit = limit
    self.interval = rate.map { .nanoseconds(Int64((1e9 / $0).rounded())) }
  }

  /// A phase starting now and ending as `stop` says.
  convenience init(_ stop: LoadOptions.Stop, rate: Double?) {
    let start = ContinuousClock.now
    switch stop {
    case .count(let count): self.init(start: start, deadline: nil, limit: count, rate: rate)
    case .duration(let duration):
      self.init(start: start, deadline: start + duration, limit: nil, rate: rate)
    }
  }

  /// An empty measurement: what a run interrupted before its measured phase reports.
  static func nothingMeasured(warmupCount: Int) -> LoadReport.Measured {
    LoadReport.Measured(
      tally: LatencyRecorder.Tally(), elapsed: .zero, before: ProcessUsage.now(),
      after: ProcessUsage.now(), warmupCount: warmupCount, partial: true)
  }

  /// Leave to start one call: its number, and the instant it is scheduled for when paced.
  struct Ticket {
    var number: Int
    /// When the call should be sent (`--rps`); its latency counts from here, so a call that
    /// could not start on time (every worker busy) shows the wait: no coordinated omission.
    var scheduled: ContinuousClock.Instant?
  }

  /// The next call to start, or nil when the phase is over: stopped, past its deadline, or
  /// every call of `-n` handed out.
  ///
  /// Paced calls due before the deadline are still handed out after it (late, their latency
  /// showing it) until the phase is halted: dropping them would hide that the client or the
  /// server fell behind.
  func claim() -> Ticket? {
    guard let interval else {
      guard !isStopped else { return nil }
      let number = tickets.wrappingAdd(1, ordering: .relaxed).oldValue
      if let limit, number >= limit { return nil }
      if let deadline, ContinuousClock.now >= deadline { return nil }
      return Ticket(number: number, scheduled: nil)
    }
    guard !halted.load(ordering: .relaxed) else { return nil }
    let number = tickets.wrappingAdd(1, ordering: .relaxed).oldValue
    if let limit, number >= limit { return nil }
    let scheduled = start + interval * number
    if let deadline, scheduled >= deadline { return nil }
    return Ticket(number: number, scheduled: scheduled)
  }

  /// One unit completed (a message, for the streaming workloads); false when it does not
  /// count because the phase is over. Reaching `-n` stops the phase.
  @discardableResult
  func completed() -> Bool {
    guard !isStopped else { return false }
    let done = units.wrappingAdd(1, ordering: .relaxed).newValue
    if let limit {
      if done > limit { return false }
      if done + failures.load(ordering: .relaxed) >= limit { stop() }
    }
    return true
  }

  /// A streaming call failed. It counts towards `-n` (not in the report's count), so a
  /// server that fails every stream cannot keep a counted run going for ever.
  func streamFailed() {
    let failed = failures.wrappingAdd(1, ordering: .relaxed).newValue
    if let limit, failed + units.load(ordering: .relaxed) >= limit { stop() }
  }

  /// Units completed so far.
  var completedUnits: Int { min(units.load(ordering: .relaxed), limit ?? .max) }

  var isStopped: Bool { stoppedAfter.load(ordering: .relaxed) >= 0 }

  /// How long the phase ran: until it was first stopped (or until now, still running).
  /// Not until the watch thread or the workers noticed: nothing counts after the stop,
  /// and a count's rate must not include the watch thread's sleep.
  var elapsed: Duration {
    let nanoseconds = stoppedAfter.load(ordering: .relaxed)
    return nanoseconds >= 0 ? .nanoseconds(nanoseconds) : .now - start
  }

  /// Ends the phase: no new call starts (but paced calls already due) and no further
  /// message counts. The first call sets ``elapsed``.
  func stop() {
    guard !isStopped else { return }
    // Several workers may stop it at once: the first instant stands.
    _ = stoppedAfter.compareExchange(
      expected: -1, desired: (ContinuousClock.now - start).wholeNanoseconds, ordering: .relaxed)
  }

  /// Ends the phase at once (an interruption): not even due paced calls start.
  func halt() {
    halted.store(true, ordering: .relaxed)
    stop()
  }
}

extension Duration {
  /// The duration in whole nanoseconds (what a latency or a phase's length is counted in).
  var wholeNanoseconds: Int64 {
    let (seconds, attoseconds) = components
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }
}
