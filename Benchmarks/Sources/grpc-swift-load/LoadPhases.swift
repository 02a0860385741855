import Synchronization

/// The phases of one run — warm-up, measured, stopping — shared by all workers, and the
/// snapshots (time, CPU, units done) taken at the two boundaries.
///
/// Workers run continuously across the boundary (a stream is not reopened for the measured
/// phase); each unit of work (a call, a ping-pong, a streamed message) is counted in the
/// phase in which it completes. The measured phase starts at the warm-up deadline and ends
/// at the duration deadline, or when the `-n`th measured unit completes.
final class LoadPhases: Sendable {
  enum Phase: Int {
    case warmup = 0
    case measuring = 1
    case stopping = 2
  }

  /// A boundary: when it was crossed, the CPU used so far, and the units done before it.
  struct Mark: Sendable {
    var instant: ContinuousClock.Instant
    var usage: ProcessUsage
  }

  private let phase = Atomic<Int>(Phase.warmup.rawValue)
  /// Units completed in the measured phase (tickets).
  private let measured = Atomic<Int>(0)
  private let marks = Mutex<(start: Mark?, end: Mark?)>((nil, nil))
  let limit: Int?

  init(measuredLimit: Int?) { limit = measuredLimit }

  var current: Phase { Phase(rawValue: phase.load(ordering: .relaxed)) ?? .stopping }

  /// Starts the measured phase (once; later calls do nothing).
  func startMeasuring() {
    let mark = Mark(instant: .now, usage: .now())
    if phase.compareExchange(
      expected: Phase.warmup.rawValue, desired: Phase.measuring.rawValue, ordering: .relaxed
    ).exchanged {
      marks.withLock { $0.start = mark }
    }
  }

  /// Ends the measured phase (once); the end mark is taken before workers drain.
  func stop() {
    let mark = Mark(instant: .now, usage: .now())
    let old = phase.exchange(Phase.stopping.rawValue, ordering: .relaxed)
    if old != Phase.stopping.rawValue {
      marks.withLock {
        if $0.start == nil { $0.start = mark }
        $0.end = mark
      }
    }
  }

  /// Records one unit completed in the measured phase; true while the run should go on.
  func countMeasured() -> Bool {
    let ticket = measured.wrappingAdd(1, ordering: .relaxed).oldValue
    if let limit, ticket + 1 >= limit {
      stop()
      return false
    }
    return true
  }

  /// The two boundaries; call after `stop()`.
  var boundaries: (start: Mark, end: Mark) {
    marks.withLock { ($0.start!, $0.end!) }
  }
}
