import ArgumentParser

/// What to call, how hard and for how long: the load-shape flags, shared through
/// `@OptionGroup` and checked in ``validate()``.
struct LoadOptions: ParsableArguments {
  /// The workloads this build can run; `--call` refuses anything else.
  enum Call: String, CaseIterable {
    case getTrip = "GetTrip"
  }

  @Option(
    name: .customLong("call"),
    help: ArgumentHelp("The workload (supported yet: GetTrip).", valueName: "name"))
  var callName = "GetTrip"

  @Option(
    name: [.customShort("c"), .customLong("concurrency")],
    help: "Calls in flight at once (closed loop).")
  var concurrency = 50

  @Option(
    name: [.customShort("n"), .customLong("total")],
    help: ArgumentHelp("Calls to measure (default 10000); not with -z.", valueName: "count"))
  var total: Int?

  @Option(
    name: [.customShort("z"), .customLong("duration")],
    help: ArgumentHelp("Measure for this many seconds instead of a count.", valueName: "seconds"))
  var duration: Double?

  @Option(
    help: ArgumentHelp(
      "Seconds of calls before measuring; excluded from every figure.", valueName: "seconds"))
  var warmup = 1.0

  @Option(help: ArgumentHelp("Open-loop rate (not yet supported).", valueName: "per-second"))
  var rps: Double?

  @Option(
    name: .customLong("trips-to-create"),
    help: ArgumentHelp(
      "Trips created on the embedded simulator; calls go round-robin over them.",
      valueName: "count"))
  var tripsToCreate = 100

  /// The workload, once ``validate()`` has accepted `--call`.
  var call: Call { Call(rawValue: callName) ?? .getTrip }

  /// When the measured phase ends: after a count of calls, or after a time.
  enum Stop {
    case count(Int)
    case duration(Duration)
  }

  /// The stop condition: `-z` if given, else `-n` (default 10,000).
  var stop: Stop {
    if let duration { return .duration(.milliseconds(Int64(duration * 1000))) }
    return .count(total ?? 10_000)
  }

  func validate() throws {
    guard Call(rawValue: callName) != nil else {
      let supported = Call.allCases.map(\.rawValue).joined(separator: ", ")
      throw ValidationError(
        "--call \(callName) is not supported yet; supported: \(supported) "
          + "(streaming and grpc.testing workloads come later)")
    }
    guard concurrency >= 1 else { throw ValidationError("-c/--concurrency must be at least 1") }
    if let total, total < 1 { throw ValidationError("-n/--total must be at least 1") }
    if let duration, !(duration.isFinite && duration > 0) {
      throw ValidationError("-z/--duration must be a positive number of seconds")
    }
    if total != nil, duration != nil {
      throw ValidationError("give -n/--total or -z/--duration, not both")
    }
    guard warmup.isFinite, warmup >= 0 else {
      throw ValidationError("--warmup must be zero or a positive number of seconds")
    }
    if rps != nil {
      throw ValidationError(
        "--rps (open-loop pacing) is not supported yet; the load is closed-loop")
    }
    guard tripsToCreate >= 1 else { throw ValidationError("--trips-to-create must be at least 1") }
  }
}
