import FleetConsumer
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
    /// Response messages received, and their bytes on the wire (gRPC's 5-byte prefix and the
    /// message as received): what h2load counts as DATA bytes.
    var responses = 0
    var responseBytes = 0
    /// The sum of the recorded latencies, for their mean: exact, where the histogram's own
    /// walks all of its ~33,000 counters through unspecialized generic code (about 5 ms of
    /// every fleet-load run's CPU, which the whole-process figures include).
    var latencySum: UInt64 = 0

    /// Records one latency in nanoseconds (at most ``LatencyRecorder/highestTrackable``).
    mutating func record(_ latency: UInt64) {
      _ = histogram.record(latency)
      latencySum &+= latency
    }

    /// The mean latency in nanoseconds; 0 when none was recorded.
    var meanLatency: Double {
      histogram.totalCount > 0 ? Double(latencySum) / Double(histogram.totalCount) : 0
    }

    mutating func add(_ other: Tally) {
      histogram.add(other.histogram)
      latencySum &+= other.latencySum
      responses += other.responses
      responseBytes += other.responseBytes
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

  /// Shards for `workers` workers: no more than the cores, as only that many threads run at
  /// once and a flush holds its shard for microseconds, while every shard costs a 270 KB
  /// histogram to clear at start-up and to merge at the end. The cores are counted as
  /// FleetConsumer counts them for its event loops (`TripService.Options.availableCores`).
  init(workers: Int) {
    let threads = TripService.Options.availableCores
    shards = (0..<min(max(workers, 1), threads, 8)).map { _ in PosixMutex(Tally()) }
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
