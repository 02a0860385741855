import ArgumentParser
import GRPCWire

/// How hard and for how long: the load-shape flags, shared through `@OptionGroup` and checked
/// in ``validate()``.
struct LoadOptions: ParsableArguments {
  @Option(
    name: [.customShort("c"), .customLong("concurrency")],
    help: "Calls in flight at once (workers; with --rps, the cap on calls in flight).")
  var concurrency = 50

  @Option(
    help: ArgumentHelp(
      "Connections to spread the workers over (round-robin, as ghz); at most -c. With "
        + "--trips: the most TripService may open (default 8), however many -c says.",
      valueName: "count"))
  var connections = 1

  @Option(
    name: [.customShort("n"), .customLong("total")],
    help: ArgumentHelp(
      "Units to measure (calls, round trips or messages; default 10000); not with -z.",
      valueName: "count"))
  var total: Int?

  @Option(
    name: [.customShort("z"), .customLong("duration")],
    help: ArgumentHelp("Measure for this many seconds instead of a count.", valueName: "seconds"))
  var duration: Double?

  @Option(
    help: ArgumentHelp(
      "Seconds of load before measuring; excluded from every figure but warmupCount.",
      valueName: "seconds"))
  var warmup = 1.0

  @Option(
    help: ArgumentHelp(
      "Open loop: send this many calls per second on a fixed schedule (rpc workloads).",
      discussion: """
        Call k is due at start + k/R. Its latency counts from that moment, not from when it \
        went out, so a server that stalls shows in the percentiles (no coordinated omission). \
        At most -c calls are in flight: when all are busy, due calls wait, late, and the wait \
        is part of their latency.
        """,
      valueName: "per-second"))
  var rps: Double?

  /// Where the workers' tasks run.
  enum Executor: String, CaseIterable, ExpressibleByArgument {
    /// The connections' event-loop thread: a call starts and completes with no thread hop.
    case loop
    /// Swift's global concurrent executor, as an application's own tasks would run.
    case pool
  }

  @Option(
    help: ArgumentHelp(
      "Where the workers run: loop (the connections' event-loop thread; a call starts and "
        + "completes with no thread hop) or pool (Swift's global executor, as an app's "
        + "tasks would).",
      valueName: "loop|pool"))
  var executor = Executor.loop

  @Option(
    name: [.customShort("m"), .customLong("metadata")],
    help: ArgumentHelp(
      "Metadata sent on every call, key=value; repeatable. Default: authorization=Bearer "
        + "load-test (replaced by an authorization given here).",
      valueName: "key=value"))
  var metadataPairs: [String] = []

  /// When the measured phase ends: after a count of units, or after a time.
  enum Stop {
    case count(Int)
    case duration(Duration)
  }

  /// The stop condition: `-z` if given, else `-n` (default 10,000).
  var stop: Stop {
    if let duration { return .duration(.milliseconds(Int64(duration * 1000))) }
    return .count(total ?? 10_000)
  }

  /// The metadata of every call: `-m` pairs, plus the default token unless one is given.
  var metadata: Metadata {
    var metadata = Metadata()
    var hasAuthorization = false
    for pair in metadataPairs {
      guard let (key, value) = Self.split(pair) else { continue }
      metadata.add(key, value)
      if key.lowercased() == "authorization" { hasAuthorization = true }
    }
    if !hasAuthorization { metadata.add("authorization", "Bearer load-test") }
    return metadata
  }

  func validate() throws {
    guard concurrency >= 1 else { throw ValidationError("-c/--concurrency must be at least 1") }
    guard connections >= 1 else { throw ValidationError("--connections must be at least 1") }
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
    if let rps, !(rps.isFinite && rps > 0 && rps <= 10_000_000) {
      throw ValidationError("--rps must be a positive number of calls per second")
    }
    for pair in metadataPairs {
      guard let (key, _) = Self.split(pair) else {
        throw ValidationError("-m/--metadata takes key=value, not \"\(pair)\"")
      }
      var check = Metadata()
      check.add(key, "")
      do {
        try check.validate()
      } catch {
        throw ValidationError("-m/--metadata \(pair): \(error)")
      }
    }
    do {
      try metadata.validate()
    } catch {
      throw ValidationError("-m/--metadata: \(error)")
    }
  }

  /// `key=value` split at the first `=`; nil without one or with an empty key.
  private static func split(_ pair: String) -> (String, String)? {
    guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else { return nil }
    return (String(pair[..<equals]), String(pair[pair.index(after: equals)...]))
  }
}
