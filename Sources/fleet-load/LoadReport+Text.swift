import Foundation
import Histogram

extension LoadReport {
  /// The report for people, in ghz's layout, with `histogram` drawn as ghz does (ten
  /// buckets between the fastest and the slowest).
  func text(histogram: Histogram<UInt64>) -> String {
    let l = latencyMicroseconds
    let rateUnit = unit == "rpc" ? "RPC/s" : "\(unit)s/s"
    let shape =
      rps.map { "open loop at \(format($0))/s, at most \(concurrency) in flight" }
      ?? "\(concurrency) in flight, closed loop"
    let calls =
      trips != nil
      ? "\(call) through TripModel, \(concurrency) trips followed over \(connections) "
        + "connection" + (connections == 1 ? "" : "s")
      : "\(call), \(shape), over \(connections) connection" + (connections == 1 ? "" : "s")
        + ", workers on the \(executor == "pool" ? "global executor" : "event loop")"
    var lines = [
      "Summary:",
      "  Target:       \(target)",
      "  Call:         \(calls)",
      "  Count:        \(count) \(unit)s" + (partial ? " (partial: interrupted)" : ""),
      "  Total:        \(format(durationSeconds * 1000)) ms",
      "  Slowest:      \(format(l.slowest / 1000)) ms",
      "  Fastest:      \(format(l.fastest / 1000)) ms",
      "  Average:      \(format(l.mean / 1000)) ms",
      "  Rate:         \(format(rate)) \(rateUnit)",
      "  Warm-up:      \(warmupCount) \(unit)s, not counted above",
    ]
    if let trips {
      lines += [
        "",
        "Trips:",
        "  Followed:     \(trips.followed) by "
          + (trips.mode == "stream"
            ? "the streaming trip feed"
            : "polling every \(format(trips.pollIntervalSeconds ?? 0)) s"),
        "  Updates:      \(format(trips.updatesPerSecond)) /s (subscriber didUpdate callbacks), "
          + "\(trips.tripsUpdated) trips updated",
        "  Errors:       \(trips.errors) failed updates",
        "  Completed:    \(trips.completedTrips) trips reached COMPLETE or CANCELED",
        "  Client CPU:   \(format(trips.cpuCores)) cores",
        "  Memory:       \(format(trips.peakRSSBytesPerTrip / 1024)) KiB peak RSS per trip "
          + "(over a baseline of \(format(Double(trips.baselineRSSBytes) / 1_048_576)) MiB)",
        "  Latency below: server time of the vehicle location → didUpdate callback",
      ]
    }
    lines += ["", "Response time histogram:"]
    lines += Self.histogramLines(histogram)
    lines += ["", "Latency distribution:"]
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
      "\(format(cpu.microsecondsPerUnit)) µs per \(unit) (user \(format(cpu.userSeconds)) s"
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
    if let responseBytesPerCall {
      lines.append(
        "  Response:     \(format(responseBytesPerCall)) bytes per call (message + 5-byte prefix)")
    }
    lines += ["", "Command: \(command)"]
    return lines.joined(separator: "\n")
  }

  /// Ten buckets from the fastest to the slowest, with bars of `∎` scaled to the largest.
  static func histogramLines(_ histogram: Histogram<UInt64>) -> [String] {
    guard histogram.totalCount > 0 else { return ["  (no samples)"] }
    let buckets = LatencyBuckets(histogram, count: 10)
    let largest = max(buckets.counts.max() ?? 1, 1)
    return zip(buckets.upperBounds, buckets.counts).map { bound, count in
      let bar = String(repeating: "∎", count: Int((Double(count) / Double(largest) * 40).rounded()))
      let label = String(format: "%.3f", Double(bound) / 1_000_000)
        .padding(toLength: 10, withPad: " ", startingAt: 0)
      return "  \(label) [\(count)]\t|\(bar)"
    }
  }

  func format(_ value: Double) -> String { String(format: "%.2f", value) }
}
