import Foundation

/// The summary of one measured run, printed as text or as one JSON object (`--format json`,
/// the same fields).
///
/// Percentiles are nearest-rank over every latency, sorted (exact; HdrHistogram is not used
/// yet). Latencies are in microseconds.
struct LoadReport: Encodable {
  var command: String
  var target: String
  var call: String
  var concurrency: Int
  var count: Int
  var durationSeconds: Double
  var rate: Double
  var latencyMicroseconds: Latency
  var statusCodes: [String: Int]
  var errors: [ErrorCount]
  var cpu: CPU
  var peakRSSBytes: Int

  /// Fastest, slowest, mean and percentiles of the measured calls.
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
    var microsecondsPerRPC: Double
  }

  init(
    command: String, target: String, call: String, concurrency: Int,
    samples: LoadRunner.Samples, elapsed: Duration, before: ProcessUsage, after: ProcessUsage,
    embedded: Bool
  ) {
    self.command = command
    self.target = target
    self.call = call
    self.concurrency = concurrency
    count = samples.latencies.count
    durationSeconds =
      Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    rate = durationSeconds > 0 ? Double(count) / durationSeconds : 0
    let sorted = samples.latencies.sorted()
    func micros(_ nanoseconds: Int64) -> Double { Double(nanoseconds) / 1000 }
    func percentile(_ p: Double) -> Double {
      guard !sorted.isEmpty else { return 0 }
      let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
      return micros(sorted[min(max(rank, 1), sorted.count) - 1])
    }
    let total = sorted.reduce(0, +)
    latencyMicroseconds = Latency(
      fastest: micros(sorted.first ?? 0), slowest: micros(sorted.last ?? 0),
      mean: sorted.isEmpty ? 0 : micros(total) / Double(sorted.count),
      p50: percentile(50), p75: percentile(75), p90: percentile(90), p95: percentile(95),
      p99: percentile(99), p999: percentile(99.9))
    statusCodes = samples.codes
    errors = samples.errors.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(10)
      .map { ErrorCount(message: $0.key, count: $0.value) }
    let user = after.userSeconds - before.userSeconds
    let system = after.systemSeconds - before.systemSeconds
    cpu = CPU(
      scope: embedded ? "process" : "client", userSeconds: user, systemSeconds: system,
      microsecondsPerRPC: count > 0 ? (user + system) * 1e6 / Double(count) : 0)
    peakRSSBytes = after.peakRSSBytes
  }

  /// The report as one line of JSON, keys sorted.
  var json: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self)
  }

  /// The report for people, in ghz's layout.
  var text: String {
    let l = latencyMicroseconds
    var lines = [
      "Summary:",
      "  Target:       \(target)",
      "  Call:         \(call), \(concurrency) in flight (closed loop)",
      "  Count:        \(count)",
      "  Total:        \(format(durationSeconds * 1000)) ms",
      "  Slowest:      \(format(l.slowest / 1000)) ms",
      "  Fastest:      \(format(l.fastest / 1000)) ms",
      "  Average:      \(format(l.mean / 1000)) ms",
      "  Rate:         \(format(rate)) RPC/s",
      "",
      "Latency distribution:",
    ]
    let percentiles = [
      ("50", l.p50), ("75", l.p75), ("90", l.p90), ("95", l.p95), ("99", l.p99), ("99.9", l.p999),
    ]
    for (name, value) in percentiles {
      let label = name.padding(toLength: 4, withPad: " ", startingAt: 0)
      lines.append("  \(label) % in \(format(value / 1000)) ms")
    }
    lines += ["", "Status code distribution:"]
    for (code, calls) in statusCodes.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
      lines.append("  [\(code)]  \(calls) responses")
    }
    if !errors.isEmpty {
      lines += ["", "Error distribution:"]
      for error in errors { lines.append("  [\(error.count)]  \(error.message)") }
    }
    lines += ["", "Resources (measured phase):"]
    let cost =
      "\(format(cpu.microsecondsPerRPC)) µs per RPC (user \(format(cpu.userSeconds)) s"
      + " + sys \(format(cpu.systemSeconds)) s)"
    if cpu.scope == "process" {
      lines.append("  Process CPU:  \(cost)")
      lines.append(
        "                client AND embedded simulator: the server runs in this process; give "
          + "--target for the client's CPU alone")
    } else {
      lines.append("  Client CPU:   \(cost)")
    }
    lines.append("  Peak RSS:     \(format(Double(peakRSSBytes) / 1_048_576)) MiB")
    lines += ["", "Command: \(command)"]
    return lines.joined(separator: "\n")
  }

  private func format(_ value: Double) -> String { String(format: "%.2f", value) }
}
