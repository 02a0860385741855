internal import FleetSync

/// The one timer of every ``TripWatch`` of a simulator: it ends each watch's wait at its
/// deadline, with one sleeping task for all of them rather than a timer per stream.
///
/// Deadlines are rounded up to a whole ``tick`` (5 ms) and kept in a heap; one task sleeps
/// until the earliest and then ends every wait due by then at once. With thousands of
/// streams that each wait for half a second, a timer per wait costs more than rendering the
/// trips (a kernel timer set and a thread woken per wait, measured at half of fleet-sim's
/// CPU); here the wake-ups are at most one a tick, and a wait may end up to a tick late.
///
/// A wait that ended otherwise leaves its entry in the heap until the entry is due; the
/// ring it then gets is ignored (``TripWatch/ring(_:)``).
final class WatchTimer: Sendable {
  /// The granularity of deadlines.
  static let tick = Duration.milliseconds(5)

  private struct Entry {
    var watch: TripWatch
    var generation: UInt64
  }

  private struct State {
    /// The pending entries by deadline: nanoseconds after ``origin``, a whole number of
    /// ticks.
    var heap = DeadlineHeap<Entry>()
    /// The task that sleeps until the heap's first deadline (or earlier), with its number,
    /// and that deadline; nil while the heap is empty.
    var sleeper: (number: UInt64, deadline: Int64, task: Task<Void, Never>?)?
    var sleepersStarted: UInt64 = 0
  }

  private let origin = ContinuousClock.now
  private let tickNanoseconds = WatchTimer.nanoseconds(WatchTimer.tick)
  private let state = PosixMutex(State())

  /// Rings `watch` with `generation` at `deadline` (or up to a tick later).
  func schedule(_ watch: TripWatch, generation: UInt64, at deadline: ContinuousClock.Instant) {
    let offset = max(Self.nanoseconds(deadline - origin), 0)
    let ticks = offset / tickNanoseconds + (offset % tickNanoseconds == 0 ? 0 : 1)
    let due = ticks * tickNanoseconds
    let (start, superseded) = state.withLock { state -> (UInt64?, Task<Void, Never>?) in
      state.heap.push(Entry(watch: watch, generation: generation), at: due)
      if let sleeper = state.sleeper, sleeper.deadline <= due { return (nil, nil) }
      // The sleeper (if any) would wake too late: a new one takes over.
      let superseded = state.sleeper?.task
      state.sleepersStarted += 1
      state.sleeper = (state.sleepersStarted, due, nil)
      return (state.sleepersStarted, superseded)
    }
    superseded?.cancel()
    guard let start else { return }
    // Weakly held while it sleeps, so that a simulator shut down is not kept alive by it.
    let task = Task { [weak self] in
      var deadline = due
      while let origin = self?.origin {
        do {
          try await Task.sleep(until: origin + .nanoseconds(deadline), clock: .continuous)
        } catch {
          return
        }
        guard let next = self?.ringDue(sleeper: start) else { return }
        deadline = next
      }
    }
    let current = state.withLock { state in
      guard state.sleeper?.number == start else { return false }
      state.sleeper?.task = task
      return true
    }
    // Already superseded, or done (then cancelling is a no-op).
    if !current { task.cancel() }
  }

  /// Rings every entry that is due, if `sleeper` is still the sleeper; returns the deadline
  /// it is to sleep until next, or nil when it is to end.
  private func ringDue(sleeper: UInt64) -> Int64? {
    let now = Self.nanoseconds(.now - origin)
    let due = state.withLock { state -> [Entry] in
      guard state.sleeper?.number == sleeper else { return [] }
      var due: [Entry] = []
      while let (_, entry) = state.heap.popDue(now: now) { due.append(entry) }
      if let earliest = state.heap.earliest {
        state.sleeper?.deadline = earliest
      } else {
        state.sleeper = nil
      }
      return due
    }
    for entry in due { entry.watch.ring(entry.generation) }
    return state.withLock { $0.sleeper?.number == sleeper ? $0.sleeper?.deadline : nil }
  }

  private static func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }
}
