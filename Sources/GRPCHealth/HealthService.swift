internal import FleetSync
internal import GRPCServiceProtos
public import GRPCWire

/// `grpc.health.v1.Health` for a ``GRPCServer``: a serving status per service, set while the
/// server runs, answered to `Check` and streamed to `Watch`, as gRPC's health-checking
/// protocol (doc/health-checking.md) has it.
///
/// The service name `""` stands for the whole server; it starts SERVING, every other service
/// starts unknown. `Check` of a service with no status fails NOT_FOUND. `Watch` sends the
/// current status at once (SERVICE_UNKNOWN for a service with none, keeping the stream open),
/// then every change; a watcher that reads slowly gets the latest status, not each one it
/// missed. Call ``enterNotServing()`` when the server begins to shut down, so that clients
/// and load balancers move away before its connections close.
///
/// ```swift
/// let health = HealthService()
/// health.register(on: server)
/// health.setStatus(.serving, forServicesOf: server)
/// …
/// health.enterNotServing()
/// await server.shutdown()
/// ```
///
/// One `HealthService` may serve several servers (registered on each); all methods may be
/// called from any task.
public final class HealthService: Sendable {
  typealias WireStatus = GRPCHealthV1.HealthCheckResponse.ServingStatus

  private struct State {
    var statuses: [String: HealthStatus] = ["": .serving]
    /// The open `Watch` calls, by the service they watch.
    var watchers: [String: [UInt64: AsyncStream<WireStatus>.Continuation]] = [:]
    var nextWatcher: UInt64 = 0
    /// After ``enterNotServing()``: every status stays NOT_SERVING.
    var notServingForGood = false
  }

  private let state = PosixMutex(State())

  /// A health service that reports the whole server (`""`) SERVING and knows no other service.
  public init() {}

  /// Registers `Check` and `Watch` on `server` (before it starts).
  public func register(on server: GRPCServer) {
    server.register(Handlers(health: self))
  }

  /// `Check` and `Watch` as the generated `ServiceProtocol` has them: a type apart, as the
  /// protocol's module is not part of this one's API.
  private struct Handlers: GRPCHealthV1.Health.ServiceProtocol {
    let health: HealthService

    func check(
      _ request: GRPCHealthV1.HealthCheckRequest, context: ServerContext
    ) async throws -> GRPCHealthV1.HealthCheckResponse {
      guard let status = health.status(of: request.service) else {
        throw RPCError(
          code: .notFound,
          message: "no health status for service '\(request.service)': the server does not "
            + "report one (\"\" is the whole server)")
      }
      return HealthService.response(status.wire)
    }

    func watch(
      _ request: GRPCHealthV1.HealthCheckRequest,
      responses: ResponseWriter<GRPCHealthV1.HealthCheckResponse>, context: ServerContext
    ) async throws {
      var sent: WireStatus?
      // Ends when the call is cancelled: the client went away or the server shut down.
      for await status in health.updates(of: request.service) where status != sent {
        try await responses.write(HealthService.response(status))
        sent = status
      }
    }
  }

  private static func response(_ status: WireStatus) -> GRPCHealthV1.HealthCheckResponse {
    var response = GRPCHealthV1.HealthCheckResponse()
    response.status = status
    return response
  }

  // MARK: Statuses

  /// The status of `service` (`""`: the whole server), or nil when it has none.
  public func status(of service: String = "") -> HealthStatus? {
    state.withLock { $0.statuses[service] }
  }

  /// Sets the status of `service` (`""`: the whole server) and tells its watchers when it
  /// changed. Ignored after ``enterNotServing()``.
  public func setStatus(_ status: HealthStatus, for service: String = "") {
    change(service, to: status)
  }

  /// Sets the status of every service registered on `server` so far (this one included).
  public func setStatus(_ status: HealthStatus, forServicesOf server: GRPCServer) {
    for service in server.registeredServices { setStatus(status, for: service) }
  }

  /// Forgets the status of `service`: `Check` of it fails NOT_FOUND again and its watchers are
  /// sent SERVICE_UNKNOWN. Ignored after ``enterNotServing()``.
  public func clearStatus(for service: String) {
    change(service, to: nil)
  }

  /// Sets every service with a status, the whole server included, to NOT_SERVING for good:
  /// later changes are ignored. Call it as the server starts to shut down; watchers are told
  /// while their calls are still open.
  public func enterNotServing() {
    state.withLock { state in
      for service in state.statuses.keys {
        Self.change(&state, service, to: .notServing)
      }
      state.notServingForGood = true
    }
  }

  private func change(_ service: String, to status: HealthStatus?) {
    state.withLock { state in
      guard !state.notServingForGood else { return }
      Self.change(&state, service, to: status)
    }
  }

  /// Records the change and tells the watchers, still under the lock: two changes made one
  /// after the other must reach every watcher in that order. `yield` only buffers or resumes
  /// a waiting reader; it never calls back into this service.
  private static func change(_ state: inout State, _ service: String, to status: HealthStatus?) {
    guard state.statuses[service] != status else { return }
    state.statuses[service] = status
    let wire = status?.wire ?? .serviceUnknown
    for watcher in (state.watchers[service] ?? [:]).values { watcher.yield(wire) }
  }

  // MARK: Watching

  /// The status of `service` now (SERVICE_UNKNOWN when it has none) and then each change;
  /// holding only the newest one a reader has not taken yet. Ends when its reader is
  /// cancelled.
  func updates(of service: String) -> AsyncStream<WireStatus> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: WireStatus.self, bufferingPolicy: .bufferingNewest(1))
    let id = state.withLock { state in
      defer { state.nextWatcher += 1 }
      return state.nextWatcher
    }
    // Set before the continuation is shared: the handler takes the lock, so it must not run
    // inside `withLock` below, and a fresh stream cannot have ended yet.
    continuation.onTermination = { [weak self] _ in
      self?.state.withLock { state in
        state.watchers[service]?[id] = nil
        if state.watchers[service]?.isEmpty == true { state.watchers[service] = nil }
      }
    }
    state.withLock { state in
      state.watchers[service, default: [:]][id] = continuation
      continuation.yield(state.statuses[service]?.wire ?? .serviceUnknown)
    }
    return stream
  }

  /// How many `Watch` calls are open, for tests.
  var watcherCount: Int {
    state.withLock { $0.watchers.values.reduce(0) { $0 + $1.count } }
  }
}
