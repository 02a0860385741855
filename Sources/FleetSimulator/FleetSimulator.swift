public import FleetProtos
internal import FleetSync
internal import GRPCHealth
internal import GRPCReflection
internal import GRPCTestingProtos
internal import GRPCTestingServices
internal import GRPCWire

/// An embedded Fleet Engine: `maps.fleetengine.v1.TripService` and the streaming
/// `fleetconsumer.v1.TripFeed` on GRPCWire's server role, with simulated vehicles driving
/// every trip.
///
/// Each trip gets a vehicle (`sim-vehicle-<n>` unless CreateTrip names one) that starts some
/// blocks from the pickup, drives a road-like route to it, waits, visits any intermediate
/// destinations and drives to the drop-off: NEW → ENROUTE_TO_PICKUP → ARRIVED_AT_PICKUP →
/// (ENROUTE_TO_INTERMEDIATE_DESTINATION → ARRIVED_AT_INTERMEDIATE_DESTINATION)* →
/// ENROUTE_TO_DROPOFF → COMPLETE. A trip's state is computed from its plan whenever it is
/// asked for, so thousands of trips cost about 1.8 KB each and no timers; see
/// ``SimulatorOptions`` for speeds, ``TokenPolicy`` for tokens, ``FaultOptions`` for faults.
///
/// UpdateTrip with `vehicle_id` in its mask reassigns a trip (a new vehicle drives to the
/// pickup from elsewhere, or takes over in place once the rider is picked up), and a second
/// SHARED trip created on a vehicle that carries one joins it: both trips' waypoints then
/// interleave the two riders' stops. ``SimulatedTripKind`` makes such trips up in process.
///
/// ```swift
/// let simulator = try await FleetSimulator.start()          // 127.0.0.1, a free port
/// let name = try simulator.createDemoTrip()                 // providers/demo-provider/trips/demo-1
/// // … follow `name` at 127.0.0.1:\(simulator.port) with any bearer token …
/// await simulator.shutdown()
/// ```
///
/// Beside them it serves gRPC's health checks (`grpc.health.v1.Health`: SERVING for `""` and
/// every service above, NOT_SERVING from the start of shutdown) and server reflection
/// (`grpc.reflection.v1` and `v1alpha`), so grpcurl and health probes work against it.
///
/// Call ``shutdown(gracePeriod:)`` when done: the server and its event-loop thread run until
/// then. All methods may be called from any task. Calls to a simulator that was shut down fail
/// UNAVAILABLE on the client; its in-process methods keep working on the stored trips.
public final class FleetSimulator: Sendable {
  /// The address it listens on.
  public let host: String
  /// The port it listens on (the one the OS picked when started with port 0).
  public let port: Int
  /// How it behaves.
  public let options: SimulatorOptions

  let core: SimulatorCore
  private let servers: ServerCycle
  /// The health statuses every server of the cycle reports.
  let health: HealthService
  let demoTrips = PosixMutex(0)

  private init(core: SimulatorCore, servers: ServerCycle, health: HealthService) {
    self.core = core
    self.servers = servers
    self.health = health
    self.host = servers.host
    self.port = servers.port
    self.options = core.options
  }

  /// Starts a simulator listening on `host:port` (port 0: a free one, see ``port``).
  ///
  /// Throws ``SimulatorError`` for unusable options and when the address cannot be bound.
  public static func start(
    host: String = "127.0.0.1", port: Int = 0, options: SimulatorOptions = SimulatorOptions()
  ) async throws -> FleetSimulator {
    if let problem = options.problem { throw SimulatorError.invalidOptions(problem) }
    guard (0...65_535).contains(port) else {
      throw SimulatorError.invalidOptions("the port must be within 0...65535, not \(port)")
    }
    let core = SimulatorCore(options: options)
    var serverOptions = ServerOptions()
    serverOptions.tls = options.tls
    serverOptions.interceptors = options.interceptors
    serverOptions.logger = options.logger
    serverOptions.eventLoops = options.eventLoops
    serverOptions.maxConcurrentStreams = options.maxConcurrentStreams
    // One of each for every server of the cycle: statuses outlive a restart.
    let health = HealthService()
    // The messages of the services above (the runtime's and health's come with reflection).
    let reflection = ReflectionService(
      files: ProtoFileDescriptor.fleetProtos + ProtoFileDescriptor.grpcTestingProtos)
    let makeServer: @Sendable () -> GRPCServer = { [serverOptions] in
      let server = GRPCServer(options: serverOptions)
      TripServiceHandlers(core: core).register(on: server)
      TripFeedHandler(core: core).register(on: server)
      GRPCTestingServices.register(on: server)
      health.register(on: server)
      reflection.register(on: server)
      health.setStatus(.serving, forServicesOf: server)
      return server
    }
    let servers: ServerCycle
    do {
      servers = try await ServerCycle(
        host: host, port: port, goAwayInterval: options.faults.goAwayInterval,
        gracePeriod: options.faults.goAwayGracePeriod, makeServer: makeServer)
    } catch {
      throw SimulatorError.cannotListen(host: host, port: port, reason: "\(error)")
    }
    return FleetSimulator(core: core, servers: servers, health: health)
  }

  /// `host:port`, ready for a client's target.
  public var endpoint: String {
    host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
  }

  /// Stops serving: health turns NOT_SERVING (health watchers are told), GOAWAY to every
  /// connection, calls in flight may finish for `gracePeriod` (a WatchTrip stream is then
  /// cancelled), then every connection closes.
  public func shutdown(gracePeriod: Duration = .seconds(1)) async {
    health.enterNotServing()
    await servers.shutdown(gracePeriod: gracePeriod)
  }

  // MARK: Trips in process (more in FleetSimulator+Trips.swift)

  /// Trip `name` as GetTrip would answer it now (every part included), or nil when there is
  /// no such trip.
  public func trip(named name: String) -> FleetEngine.Trip? {
    guard let record = core.store.record(named: name) else { return nil }
    return core.renderer.render(record, at: core.clock.now(), options: .full)
  }

  /// The number of trips held.
  public var tripCount: Int { core.store.count }

  /// What the simulator has done so far.
  public var statistics: Statistics {
    let (calls, failures) = core.faults.counts
    return Statistics(calls: calls, injectedFailures: failures, goAways: servers.goAways)
  }

  /// Counts of what a simulator has done.
  public struct Statistics: Sendable, Hashable {
    /// Calls that reached a TripService or TripFeed method.
    public var calls: Int
    /// Calls failed on purpose (``FaultOptions/failureRate``).
    public var injectedFailures: Int
    /// Server restarts with GOAWAY (``FaultOptions/goAwayInterval``).
    public var goAways: Int
  }
}
