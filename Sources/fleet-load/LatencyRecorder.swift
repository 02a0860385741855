import FleetSync
import Histogram

/// Latencies and outcomes of one phase, gathered from every worker into a few shards.
///
/// A worker logs into its own ``WorkerLog`` and hands a batch to its shard every 256 samples
/// and when it ends, so the hot path takes a lock once per batch; a histogram per worker would
/// cost about 270 KB each (nanoseconds up to an hour at three significant digits).
final class LatencyRecorder: Sendable {
  /// What a shard (and the merged result) holds.
  struct Tally: Sendable {
    /// Latencies in nanoseconds.
    var histogram = LatencyRecorder.emptyHistogram()
    /// Calls per gRPC status code name (`OK`, `UNAVAILABLE`, ...).
    var codes: [String: Int] = [:]
    /// Failed calls per error message.
    var errors: [String: Int] = [:]

    mutating func add(_ other: Tally) {
      histogram.add(other.histogram)
      codes.merge(other.codes, uniquingKeysWith: +)
      errors.merge(other.errors, uniquingKeysWith: +)
    }
  }

  /// The longest latency recorded as itself; longer ones are recorded as this (one hour).
  static let highestTrackable: UInt64 = 3_600_000_000_000

  static func emptyHistogram() -> Histogram<UInt64> {
    Histogram(
      lowestDiscernibleValue: 1, highestTrackableValue: highestTrackable,
      numberOfSignificantValueDigits: .three)
  }

  private let shards: [PosixMutex<Tally>]

  init(workers: Int) {
    shards = (0..<min(max(workers, 1), 8)).map { _ in PosixMutex(Tally()) }
  }

  /// A fresh log for worker number `worker`.
  func log(for worker: Int) -> WorkerLog {
    WorkerLog(shard: shards[worker % shards.count])
  }

  /// Everything recorded so far, merged.
  func tally() -> Tally {
    var all = Tally()
    for shard in shards { all.add(shard.withLock { $0 }) }
    return all
  }
}

/// One worker's samples not yet handed to its shard.
struct WorkerLog {
  fileprivate let shard: PosixMutex<LatencyRecorder.Tally>
  private var latencies: [UInt64] = []
  /// OK outcomes, counted apart: most calls are OK, and a counter costs no string hashing.
  private var ok = 0
  private var codes: [String: Int] = [:]
  private var errors: [String: Int] = [:]

  fileprivate init(shard: PosixMutex<LatencyRecorder.Tally>) {
    self.shard = shard
    latencies.reserveCapacity(256)
  }

  /// One unit's latency.
  mutating func record(_ latency: Duration) {
    let (seconds, attoseconds) = latency.components
    let nanoseconds = max(seconds * 1_000_000_000 + attoseconds / 1_000_000_000, 0)
    latencies.append(min(UInt64(nanoseconds), LatencyRecorder.highestTrackable))
    if latencies.count >= 256 { flush() }
  }

  /// One call's outcome: `error` nil for OK.
  mutating func outcome(_ error: RPCErrorSummary?) {
    guard let error else {
      ok += 1
      return
    }
    codes[error.code, default: 0] += 1
    errors[error.message, default: 0] += 1
  }

  /// Hands everything to the shard.
  mutating func flush() {
    var codes = self.codes
    if ok > 0 { codes["OK", default: 0] += ok }
    let (latencies, errors) = (self.latencies, self.errors)
    shard.withLock { tally in
      for latency in latencies { _ = tally.histogram.record(latency) }
      tally.codes.merge(codes, uniquingKeysWith: +)
      tally.errors.merge(errors, uniquingKeysWith: +)
    }
    self.latencies.removeAll(keepingCapacity: true)
    ok = 0
    self.codes.removeAll()
    self.errors.removeAll()
  }
}

/// A failed call as the report counts it: its status code name and message.
struct RPCErrorSummary {
  var code: String
  var message: String
}
