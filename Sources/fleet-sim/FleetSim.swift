import ArgumentParser
import FleetCommandLine
import FleetSimulator
import FleetSync
import GRPCWire
import Logging
import ServiceLifecycle

#if canImport(Glibc)
  import Glibc
#endif

/// The Fleet Engine simulator as a gRPC server, for the load tool, `fleet-follow` and any
/// other gRPC client (Google's own client libraries included).
///
/// Its first line on stdout is `listening on HOST:PORT`; with `--trips N` a second line names
/// the trips it created. SIGTERM or SIGINT shut it down gracefully (exit status 0).
@main
struct FleetSim: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleet-sim",
    abstract: "Serve a simulated Fleet Engine (TripService and the TripFeed stream) over gRPC.",
    discussion: """
      Serves maps.fleetengine.v1.TripService (CreateTrip, GetTrip, UpdateTrip, SearchTrips, \
      DeleteTrip) and fleetconsumer.v1.TripFeed/WatchTrip over HTTP/2, plaintext or TLS. Every trip gets \
      a simulated vehicle (sim-vehicle-<n>) that drives to the pickup, waits, and drives to \
      the drop-off. The first line on stdout is `listening on HOST:PORT`.

      Trip kinds: --trip-kind makes the --trips trips show more of Fleet Engine's trip model: \
      multi-stop trips whose intermediate_destination_index advances, trips reassigned to \
      another vehicle_id, SHARED pairs whose remaining waypoints interleave both trips' stops \
      (each named by its trip_id). Through the API, UpdateTrip with vehicle_id in the mask \
      reassigns a trip, and a second SHARED trip created on a vehicle that carries one joins it.

      Load targets: beside Fleet Engine it always serves gRPC's own test services, \
      grpc.testing.BenchmarkService (UnaryCall, StreamingCall, StreamingFromClient, \
      StreamingFromServer, StreamingBothWays; responses of the request's response_size) and \
      grpc.testing.TestService (EmptyCall, UnaryCall, StreamingOutputCall and the rest, with \
      the interop metadata echo), so fleet-load and other gRPC clients can load it with \
      standard workloads. They need no token, and the per-call faults (--fail-rate, \
      --latency-ms, --drop-rate) leave them alone.

      Health and reflection: grpc.health.v1.Health answers SERVING for "" and for every \
      service above until shutdown begins, then NOT_SERVING; grpc.reflection.v1 and v1alpha \
      ServerReflection list the services and serve their .proto descriptors, so grpcurl \
      and other tools can call fleet-sim with no .proto files. Neither needs a token.

      Tokens: by default any `authorization: Bearer <token>` is accepted and a call without \
      one is UNAUTHENTICATED. With --strict-tokens a token must be `sim:<trip_id>` (or \
      `sim:*`), or a JWT whose payload has {"authorization": {"tripid": "<trip_id>"}} and \
      optionally "exp"; another trip's token is PERMISSION_DENIED.

      TLS: with --tls-cert and --tls-key it serves TLS 1.2+ with ALPN h2 only.

      Logs: --log-level (default notice) writes the server's events to stderr: at debug its \
      connections and each call handled. No line carries a token.
      """)

  @Option(help: "The address to listen on.")
  var host = "127.0.0.1"

  @Option(help: "The port to listen on (0: one the OS picks; see the first line of output).")
  var port = 0

  @Option(help: "Serve TLS with this certificate chain (PEM); needs --tls-key.")
  var tlsCert: String?

  @Option(help: "The private key (PEM) of --tls-cert.")
  var tlsKey: String?

  @Option(help: "Create this many trips at start (providers/<provider>/trips/trip-<n>).")
  var trips = 0

  @Option(help: "The provider ID of the trips made by --trips.")
  var provider = "sim-provider"

  @Option(
    help: ArgumentHelp(
      "What the trips made by --trips do: exclusive (pickup and drop-off), multi-stop (three "
        + "intermediate destinations), reassigned (a new vehicle halfway to the pickup), "
        + "shared (trips 1 and 2, 3 and 4, … share a vehicle), mixed (those in turn).",
      valueName: "kind"))
  var tripKind: SimulatedTripKind = .exclusive

  @Option(help: "How much faster than real time the simulation runs.")
  var timeScale = 60.0

  @Option(help: "The vehicles' speed in km/h (simulated).")
  var speedKmh = 30.0

  @Option(
    help: ArgumentHelp(
      "Move the simulated world in steps of this many (real) seconds, still in between, so "
        + "observers that look more often see the same states."))
  var clockStep: Double?

  @Option(
    help: ArgumentHelp(
      "Hold every trip still at this many simulated seconds after its creation: the same "
        + "trip for every call (180: ENROUTE_TO_PICKUP, halfway there), for benchmarks.",
      valueName: "seconds"))
  var freezeAt: Double?

  @Flag(help: "Check tokens per trip (sim:<trip_id>, sim:*, or a JWT with authorization.tripid).")
  var strictTokens = false

  @Option(help: "Seed for generated trips and injected faults.")
  var seed: UInt64 = 1

  @Option(
    help: ArgumentHelp(
      "Serve Prometheus metrics (rpc_server_duration by method and status) over HTTP at http://127.0.0.1:<port>/metrics (0: a port the OS picks).",
      discussion: "A line `metrics on http://127.0.0.1:PORT/metrics` follows the first line once it listens."))
  var metricsPort: Int?

  @Option(
    help: ArgumentHelp(
      "The event-loop threads client connections are spread over (one loop serves a connection and its calls).",
      discussion: "Give more than 1 when the simulator has cores to itself and many clients: on a machine it shares with its load (a 2-core one running fleet-load too), extra loops only contend for the same cores."))
  var eventLoops: Int = 1

  @Option(
    help: ArgumentHelp(
      "SETTINGS_MAX_CONCURRENT_STREAMS announced to each client connection: how many calls (feed streams among them) one connection may hold at once.",
      discussion: "Fleet Engine's front ends announce 100; give that to see how a client fares against them."))
  var maxConcurrentStreams: Int = 1_000

  @OptionGroup(title: "Fault injection")
  var faults: FaultArguments

  @OptionGroup(title: "Logging") var logging: LoggingOptions

  func validate() throws {
    guard (tlsCert == nil) == (tlsKey == nil) else {
      throw ValidationError("--tls-cert and --tls-key go together")
    }
    guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
    guard trips >= 0 else { throw ValidationError("--trips must not be negative") }
    guard eventLoops >= 1 else { throw ValidationError("--event-loops must be at least 1") }
    guard maxConcurrentStreams >= 1 else {
      throw ValidationError("--max-concurrent-streams must be at least 1")
    }
    guard !provider.isEmpty, !provider.contains("/") else {
      throw ValidationError("--provider must be a non-empty ID without '/'")
    }
    guard timeScale > 0, timeScale.isFinite else {
      throw ValidationError("--time-scale must be a positive number")
    }
    if let freezeAt, !(freezeAt >= 0 && freezeAt.isFinite) {
      throw ValidationError("--freeze-at must be a number of seconds, 0 or more")
    }
    if let clockStep, !(clockStep > 0 && clockStep.isFinite) {
      throw ValidationError("--clock-step must be a positive number of seconds")
    }
    guard speedKmh > 0, speedKmh.isFinite else {
      throw ValidationError("--speed-kmh must be a positive number")
    }
  }

  func run() async throws {
    var options = SimulatorOptions()
    options.timeScale = timeScale
    options.speedKilometersPerHour = speedKmh
    options.tokenPolicy = strictTokens ? .perTrip : .anyBearerToken
    options.faults = faults.options
    options.seed = seed
    options.eventLoops = eventLoops
    options.maxConcurrentStreams = maxConcurrentStreams
    options.clockStep = clockStep.map { .milliseconds(Int64(($0 * 1000).rounded())) }
    options.frozenAt = freezeAt.map { .milliseconds(Int64(($0 * 1000).rounded())) }
    if let tlsCert, let tlsKey {
      options.tls = (certificateChainFile: tlsCert, privateKeyFile: tlsKey)
    }
    if let metricsPort, !(0...65_535).contains(metricsPort) {
      throw ValidationError("--metrics-port must be within 0...65535")
    }
    let metrics = metricsPort.map { port in
      MetricsEndpoint(port: port) { bound in
        print("metrics on http://127.0.0.1:\(bound)/metrics")
        fflush(nil)
      }
    }
    let logger = logging.logger(label: "fleet-sim", defaultLevel: .notice)
    options.logger = logger
    options.interceptors = LoggingOptions.serverInterceptors(logger)
    if let metrics { options.interceptors.append(metrics.interceptor) }
    // Catch SIGTERM/SIGINT before announcing the port: a signal right after it must not kill us.
    let shutdown = ShutdownSignals()
    let simulator = try await FleetSimulator.start(host: host, port: port, options: options)
    // The trips exist before the first line goes out, so a client that waits for it finds
    // them.
    let names =
      trips > 0 ? try simulator.createTrips(count: trips, providerID: provider, kind: tripKind) : []
    print("listening on \(simulator.endpoint)")
    if let first = names.first, let last = names.last {
      print("created \(names.count) trips: \(first) ... \(last)")
    }
    // Whoever started us reads these lines from a pipe: do not leave them in stdout's buffer.
    fflush(nil)  // nil flushes every stream; naming `stdout` is not concurrency-safe in Swift 6
    // The simulator runs as a service of a ServiceGroup; the signals caught above end it
    // gracefully (GOAWAY, a second for calls in flight).
    let group = ServiceGroup(
      configuration: ServiceGroupConfiguration(
        services: [.init(service: simulator)] + (metrics.map { [.init(service: $0.application)] } ?? []),
        logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      tasks.addTask { try await group.run() }
      tasks.addTask {
        await shutdown.wait()
        await group.triggerGracefulShutdown()
      }
      try await tasks.waitForAll()
    }
  }
}
