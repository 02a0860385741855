import ArgumentParser
import FleetSimulator
import GRPCWire

/// The fault-injection options of `fleet-sim`.
struct FaultArguments: ParsableArguments {
  @Option(help: "The share of calls (0...1) answered with --fail-code instead of being served.")
  var failRate = 0.0

  @Option(help: "The status of injected failures: a gRPC code name such as UNAVAILABLE.")
  var failCode = "UNAVAILABLE"

  @Option(help: "Add a google.rpc.RetryInfo with this delay (ms) to injected failures.")
  var retryDelayMs: Int?

  @Option(help: "Milliseconds to wait before answering every call.")
  var latencyMs = 0

  @Option(
    help: "The share of calls (0...1) whose connection is closed at once, without GOAWAY.")
  var dropRate = 0.0

  @Option(
    help: ArgumentHelp(
      "Every this many seconds, send GOAWAY to every connection and listen again.",
      discussion: """
        The server restarts: calls in flight may finish for --goaway-grace-ms, then the \
        connections close. Trips are unaffected.
        """))
  var goawayEvery: Double?

  @Option(help: "How long calls in flight may finish after a GOAWAY, in ms (0: end them at once).")
  var goawayGraceMs = 1_000

  func validate() throws {
    guard (0...1).contains(failRate) else {
      throw ValidationError("--fail-rate must be within 0...1")
    }
    guard (0...1).contains(dropRate) else {
      throw ValidationError("--drop-rate must be within 0...1")
    }
    guard let code = StatusCode(name: failCode.uppercased()), code != .ok else {
      throw ValidationError(
        "--fail-code must name a gRPC status other than OK (e.g. UNAVAILABLE), not '\(failCode)'")
    }
    guard latencyMs >= 0, goawayGraceMs >= 0, (retryDelayMs ?? 0) >= 0 else {
      throw ValidationError(
        "--latency-ms, --retry-delay-ms and --goaway-grace-ms must not be negative")
    }
    if let goawayEvery, !(goawayEvery > 0) {
      throw ValidationError("--goaway-every must be a positive number of seconds")
    }
  }

  /// The options these arguments describe.
  var options: FaultOptions {
    var faults = FaultOptions()
    faults.failureRate = failRate
    faults.failureCode = StatusCode(name: failCode.uppercased()) ?? .unavailable
    faults.retryDelay = retryDelayMs.map { .milliseconds($0) }
    faults.latency = .milliseconds(latencyMs)
    faults.dropConnectionRate = dropRate
    faults.goAwayInterval = goawayEvery.map { .milliseconds(Int64(($0 * 1000).rounded())) }
    faults.goAwayGracePeriod = .milliseconds(goawayGraceMs)
    return faults
  }
}
