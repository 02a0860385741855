import Foundation
import Histogram

/// The summary of one measured run, printed as text (ghz's layout) or as one JSON object
/// (`--format json`, the same figures).
///
/// Latencies are in microseconds, from an HdrHistogram of nanoseconds (three significant
/// digits). `count` and `rate` count ``unit``s: calls or round trips (`rpc`), stream messages
/// (`message`), or trip updates (`update`, `--trips`).
struct LoadReport: Encodable {
  var command: String
  var target: String
  var call: String
  var unit: String
  var concurrency: Int
  /// `--connections`; for `--trips`, the TCP connections TripService had open to the target
  /// when measuring ended (it opens more as the server's stream limit requires).
  var connections: Int
  /// The paced rate (`--rps`), nil for a closed loop.
  var rps: Double?
  /// Where the workers ran (`--executor`: `loop` or `pool`); nil for `--trips`.
  var executor: String?
  var count: Int
  var durationSeconds: Double
  var rate: Double
  var latencyMicroseconds: Latency
  /// Calls per status code name; for message workloads one per stream (a stream still
  /// healthy when the run stopped counts as OK); for --trips, OK per update and a code per
  /// failed update.
  var statusCodes: [String: Int]
  var errors: [ErrorCount]
  var cpu: CPU
  var peakRSSBytes: Int
  /// Bytes received per unary response in the measured phase: the message as it arrived and
  /// gRPC's 5-byte prefix, which is what h2load counts as DATA bytes; nil for streams and
  /// `--trips`.
  var responseBytesPerCall: Double?
  /// Units completed during the warm-up (not in any other figure).
  var warmupCount: Int
  /// GetTrip calls made before the load to check that the target has the trips (not in any
  /// other figure): a server counting calls saw count + warmupCount + probeCount.
  var probeCount = 0
  /// True when Ctrl-C or SIGTERM cut the run short.
  var partial: Bool
  /// The figures of `--trips`.
  var trips: Trips?

  /// Fastest, slowest, mean and percentiles of the measured units.
  struct Latency: Encodable {
    var fastest: Double
    var slowest: Double
    var mean: Double
    var p50: Double
    var p75: Double
    var p90: Double
    var p95: Double
    var p99: Double
    var p999: Double
  }

  /// One error message and how many calls failed with it.
  struct ErrorCount: Encodable {
    var message: String
    var count: Int
  }

  /// CPU used during the measured phase.
  struct CPU: Encodable {
    /// `client`, or `process` when the embedded simulator shared the process.
    var scope: String
    var userSeconds: Double
    var systemSeconds: Double
    /// CPU per call (streams count once each, however many messages they carried).
    var microsecondsPerRPC: Double
    /// CPU per ``LoadReport/unit``.
    var microsecondsPerUnit: Double
  }

  /// What `--trips` adds.
  struct Trips: Encodable {
    var followed: Int
    /// `poll` or `stream`.
    var mode: String
    var pollIntervalSeconds: Double?
    var updatesPerSecond: Double
    /// Subscriber callback latency: server time of the vehicle location → didUpdate callback.
    var callbackLatencyMicroseconds: Latency
    /// didFailUpdateTripWithError callbacks.
    var errors: Int
    /// Trips that reached COMPLETE or CANCELED (they stop being followed).
    var completedTrips: Int
    /// Trips that got at least one update in the measured phase.
    var tripsUpdated: Int
    /// Client CPU over the measured phase divided by its duration (1.0 = one core).
    var cpuCores: Double
    /// Resident memory before the TripService existed.
    var baselineRSSBytes: Int
    /// (peak RSS − baseline) / followed trips.
    var peakRSSBytesPerTrip: Double
  }

  /// The run as measured, before it is summarised.
  struct Measured {
    var tally: LatencyRecorder.Tally
    /// Units completed; nil: as many as latencies recorded.
    var units: Int? = nil
    var elapsed: Duration
    var before: ProcessUsage
    var after: ProcessUsage
    var warmupCount: Int
    var partial: Bool

    /// User-mode CPU seconds between `before` and `after`.
    var userSeconds: Double { after.userSeconds - before.userSeconds }
    /// Kernel-mode CPU seconds between `before` and `after`.
    var systemSeconds: Double { after.systemSeconds - before.systemSeconds }
  }

  init(
    command: String, target: String, call: String, unit: Workload.Unit, concurrency: Int,
    connections: Int, rps: Double?, embedded: Bool, measured: Measured
  ) {
    self.command = command
    self.target = target
    self.call = call
    self.unit = unit.rawValue
    self.concurrency = concurrency
    self.connections = connections
    self.rps = rps
    let histogram = measured.tally.histogram
    count = measured.units ?? Int(histogram.totalCount)
    durationSeconds = ProgressBar.seconds(measured.elapsed)
    rate = durationSeconds > 0 ? Double(count) / durationSeconds : 0
    latencyMicroseconds = Self.latency(measured.tally)
    statusCodes = measured.tally.codes
    errors = measured.tally.errors.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(10)
      .map { ErrorCount(message: $0.key, count: $0.value) }
    let (user, system) = (measured.userSeconds, measured.systemSeconds)
    let calls = statusCodes.values.reduce(0, +)
    cpu = CPU(
      scope: embedded ? "process" : "client", userSeconds: user, systemSeconds: system,
      microsecondsPerRPC: calls > 0 ? (user + system) * 1e6 / Double(calls) : 0,
      microsecondsPerUnit: count > 0 ? (user + system) * 1e6 / Double(count) : 0)
    peakRSSBytes = measured.after.peakRSSBytes
    let responses = measured.tally.responses
    responseBytesPerCall =
      responses > 0 ? Double(measured.tally.responseBytes) / Double(responses) : nil
    warmupCount = measured.warmupCount
    partial = measured.partial
  }

  static func latency(_ tally: LatencyRecorder.Tally) -> Latency {
    let histogram = tally.histogram
    guard histogram.totalCount > 0 else {
      return Latency(
        fastest: 0, slowest: 0, mean: 0, p50: 0, p75: 0, p90: 0, p95: 0, p99: 0, p999: 0)
    }
    func micros(_ percentile: Double) -> Double {
      Double(histogram.valueAtPercentile(percentile)) / 1000
    }
    return Latency(
      fastest: Double(histogram.min) / 1000, slowest: Double(histogram.max) / 1000,
      mean: tally.meanLatency / 1000, p50: micros(50), p75: micros(75), p90: micros(90),
      p95: micros(95), p99: micros(99), p999: micros(99.9))
  }

  /// The report as one line of JSON, keys sorted.
  var json: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self)
  }
}
