import Foundation

/// The summary of one run, with fleet-load's JSON keys (`--format json`, keys sorted), plus
/// `unit`, `warmupCount`, `drainedCount` and `cpu.microsecondsPerUnit`.
///
/// Percentiles are nearest-rank over every measured latency, in microseconds; a streamed
/// message's latency is the time since the previous message of its stream.
struct LoadReport: Encodable {
  var command: String
  var target: String
  var call: String
  /// `rpc` or `message`: what `count`, `rate` and the CPU figure are per.
  var unit: String
  var concurrency: Int
  var count: Int
  var warmupCount: Int
  var drainedCount: Int
  var durationSeconds: Double
  var rate: Double
  var latencyMicroseconds: Latency
  var statusCodes: [String: Int]
  var errors: [ErrorCount]
  var cpu: CPU
  var peakRSSBytes: Int
  /// Bytes received per unary response, as fleet-load reports them: the message and gRPC's
  /// 5-byte prefix (h2load's DATA bytes); nil for streams.
  var responseBytesPerCall: Double?

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

  struct ErrorCount: Encodable {
    var message: String
    var count: Int
  }

  struct CPU: Encodable {
    var scope = "client"
    var userSeconds: Double
    var systemSeconds: Double
    var microsecondsPerUnit: Double
    /// The same figure under fleet-load's first key.
    var microsecondsPerRPC: Double
  }

  init(
    command: String, target: String, call: String, unit: String, concurrency: Int,
    results: WorkerResult, start: LoadPhases.Mark, end: LoadPhases.Mark
  ) {
    self.command = command
    self.target = target
    self.call = call
    self.unit = unit
    self.concurrency = concurrency
    count = results.measured
    warmupCount = results.warmup
    drainedCount = results.drained
    let elapsed = end.instant - start.instant
    durationSeconds =
      Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    rate = durationSeconds > 0 ? Double(count) / durationSeconds : 0
    let sorted = results.latencies.sorted()
    func micros(_ nanoseconds: Int64) -> Double { Double(nanoseconds) / 1000 }
    func percentile(_ p: Double) -> Double {
      guard !sorted.isEmpty else { return 0 }
      let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
      return micros(sorted[min(max(rank, 1), sorted.count) - 1])
    }
    latencyMicroseconds = Latency(
      fastest: micros(sorted.first ?? 0), slowest: micros(sorted.last ?? 0),
      mean: sorted.isEmpty ? 0 : micros(sorted.reduce(0, +)) / Double(sorted.count),
      p50: percentile(50), p75: percentile(75), p90: percentile(90), p95: percentile(95),
      p99: percentile(99), p999: percentile(99.9))
    statusCodes = results.codes
    responseBytesPerCall =
      results.responses > 0 ? Double(results.responseBytes) / Double(results.responses) : nil
    errors = results.errors.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(10)
      .map { ErrorCount(message: $0.key, count: $0.value) }
    let user = end.usage.userSeconds - start.usage.userSeconds
    let system = end.usage.systemSeconds - start.usage.systemSeconds
    let perUnit = count > 0 ? (user + system) * 1e6 / Double(count) : 0
    cpu = CPU(
      userSeconds: user, systemSeconds: system, microsecondsPerUnit: perUnit,
      microsecondsPerRPC: perUnit)
    peakRSSBytes = ProcessUsage.now().peakRSSBytes
  }

  var json: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self)
  }

  var text: String {
    let l = latencyMicroseconds
    func f(_ value: Double) -> String { String(format: "%.2f", value) }
    var lines = [
      "Summary:",
      "  Target:       \(target) (grpc-swift 2, 1 HTTP/2 connection)",
      "  Call:         \(call), \(concurrency) workers (closed loop)",
      "  Count:        \(count) \(unit)s (+ \(warmupCount) warm-up, \(drainedCount) after)",
      "  Total:        \(f(durationSeconds * 1000)) ms",
      "  Rate:         \(f(rate)) \(unit)s/s",
      "  Latency:      p50 \(f(l.p50 / 1000)) ms, p99 \(f(l.p99 / 1000)) ms, "
        + "mean \(f(l.mean / 1000)) ms",
      "  Status codes: "
        + statusCodes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        .joined(separator: ", "),
    ]
    for error in errors { lines.append("  [\(error.count)] \(error.message)") }
    lines.append(
      "  Client CPU:   \(f(cpu.microsecondsPerUnit)) µs per \(unit) (user \(f(cpu.userSeconds)) s"
        + " + sys \(f(cpu.systemSeconds)) s)")
    lines.append("  Peak RSS:     \(f(Double(peakRSSBytes) / 1_048_576)) MiB")
    lines.append("Command: \(command)")
    return lines.joined(separator: "\n")
  }
}
