import ArgumentParser

/// What to call: the workload and its sizes, or trips to follow (`--trips`).
struct WorkloadOptions: ParsableArguments {
  @Option(
    name: .customLong("call"),
    help: ArgumentHelp(
      "The workload: "
        + Workload.allCases.map(\.rawValue).joined(separator: ", ") + ".",
      valueName: "name"))
  var callName = Workload.getTrip.rawValue

  @Option(
    help: ArgumentHelp(
      "Payload bytes of each grpc.testing request (SimpleRequest.payload).", valueName: "bytes"))
  var requestSize = 0

  @Option(
    help: ArgumentHelp(
      "Payload bytes of each grpc.testing response (response_size, ResponseParameters.size).",
      valueName: "bytes"))
  var responseSize = 0

  @Option(
    help: ArgumentHelp(
      "Responses each StreamingOutputCall asks for.", valueName: "count"))
  var streamMessages = 100

  @Option(
    name: .customLong("trips-to-create"),
    help: ArgumentHelp(
      "Trips created on the embedded simulator (GetTrip, WatchTrip go round-robin over them; "
        + "--trips follows the first N); with --target, the count `fleet-sim --trips N` "
        + "created. Default: --trips if given, else 100.",
      valueName: "count"))
  var tripsToCreateOption: Int?

  /// The trips there are: `--trips-to-create`, else `--trips`, else 100.
  var tripsToCreate: Int { tripsToCreateOption ?? trips ?? 100 }

  @Option(
    help: ArgumentHelp(
      "Follow this many trips through TripService/TripModel instead of raw calls.",
      discussion: """
        Each trip gets a TripModel with one subscriber; the report counts trip updates \
        (didUpdate callbacks) and their callback latency: from the server time of the \
        trip's vehicle location (fleet-sim stamps it when it renders the trip for the \
        response) to the callback, so it covers sending, decoding, merging and dispatch. \
        Against another server that stamp is when the location was reported, and the figure \
        includes its age. With -z (default 10 s); not with --call or --rps; -c does not \
        apply, and --connections is the most connections TripService may open.
        """,
      valueName: "count"))
  var trips: Int?

  @Option(
    help: ArgumentHelp("Seconds between polls of each trip (--trips).", valueName: "seconds"))
  var pollInterval = 1.0

  @Flag(help: "With --trips: follow through the streaming trip feed instead of polling.")
  var stream = false

  @Option(
    help: ArgumentHelp(
      "With --trips: the event-loop threads TripService follows on, the trips spread over "
        + "them in turn (Options.eventLoops, with tripsPerEventLoop 1; at most --connections). "
        + "Without it, TripService's default: a loop per 12,000 trips, up to the cores.",
      valueName: "count"))
  var eventLoops: Int?

  /// The workload, once ``validate()`` has accepted `--call`.
  var workload: Workload { Workload(rawValue: callName) ?? .getTrip }

  func validate() throws {
    guard Workload(rawValue: callName) != nil else {
      let names = Workload.allCases.map(\.rawValue).joined(separator: ", ")
      throw ValidationError("--call \(callName) is not a workload; give one of: \(names)")
    }
    guard requestSize >= 0, requestSize <= 4 << 20, responseSize >= 0, responseSize <= 4 << 20
    else {
      throw ValidationError("--request-size and --response-size must be within 0...4194304")
    }
    guard streamMessages >= 1, streamMessages <= 100_000 else {
      throw ValidationError("--stream-messages must be within 1...100000")
    }
    guard tripsToCreate >= 1 else { throw ValidationError("--trips-to-create must be at least 1") }
    if let trips, trips < 1 { throw ValidationError("--trips must be at least 1") }
    if let trips, trips > tripsToCreate {
      throw ValidationError(
        "--trips \(trips) is more than the \(tripsToCreate) trips of --trips-to-create")
    }
    guard pollInterval.isFinite, pollInterval >= 0.1 else {
      throw ValidationError("--poll-interval must be at least 0.1 seconds")
    }
    if stream, trips == nil { throw ValidationError("--stream goes with --trips") }
    if let eventLoops {
      guard trips != nil else { throw ValidationError("--event-loops goes with --trips") }
      guard eventLoops >= 1 else { throw ValidationError("--event-loops must be at least 1") }
    }
  }
}
