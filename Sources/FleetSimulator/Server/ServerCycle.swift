internal import FleetSync
internal import GRPCWire

/// The simulator's gRPC server, and its periodic restarts when GOAWAYs are injected.
///
/// GRPCServer has no way to send GOAWAY on a live connection, so a GOAWAY fault restarts
/// the server: the old one stops listening, sends GOAWAY to every connection and lets calls
/// finish for the grace period (``GRPCServer/shutdown(gracePeriod:)``), while a new one
/// listens on the same port a few milliseconds later. Clients see a GOAWAY and reconnect;
/// trips live in the simulator, not the server, and are unaffected.
final class ServerCycle: Sendable {
  private struct State {
    var server: GRPCServer
    var restarts: Task<Void, Never>? = nil
    var draining: [Task<Void, Never>] = []
    var goAways = 0
    var stopped = false
  }

  let host: String
  let port: Int
  private let makeServer: @Sendable () -> GRPCServer
  private let state: PosixMutex<State>

  /// Starts a server made by `makeServer` on `host:port` (0: a free port); with
  /// `goAwayInterval`, restarts it that often. Throws UNAVAILABLE when it cannot listen.
  init(
    host: String, port: Int, goAwayInterval: Duration?, gracePeriod: Duration,
    makeServer: @escaping @Sendable () -> GRPCServer
  ) async throws {
    let server = makeServer()
    self.host = host
    self.port = try await server.start(host: host, port: port)
    self.makeServer = makeServer
    self.state = PosixMutex(State(server: server))
    if let goAwayInterval {
      let task = Task { [self] in await restartEvery(goAwayInterval, gracePeriod: gracePeriod) }
      state.withLock { $0.restarts = task }
    }
  }

  /// How many times the server sent GOAWAY to its connections and listened again.
  var goAways: Int { state.withLock { $0.goAways } }

  private func restartEvery(_ interval: Duration, gracePeriod: Duration) async {
    while (try? await Task.sleep(for: interval)) != nil {
      let next = makeServer()
      let old = state.withLock { state -> GRPCServer? in
        guard !state.stopped else { return nil }
        defer { state.server = next }
        return state.server
      }
      guard let old else { return }
      let drain = Task { await old.shutdown(gracePeriod: gracePeriod) }
      state.withLock { $0.draining.append(drain) }
      // The old server closes its listening socket on its loop right away; until then the
      // port is taken, so retry at once and often: a client reconnecting in between is
      // refused.
      var listening = false
      for _ in 0..<4_000 where !Task.isCancelled {
        if (try? await next.start(host: host, port: port)) != nil {
          listening = true
          break
        }
        try? await Task.sleep(for: .microseconds(500))
      }
      state.withLock { $0.goAways += 1 }
      guard listening else { return }
    }
  }

  /// Stops restarting and shuts the server down: GOAWAY, up to `gracePeriod` for calls in
  /// flight, then every connection closed.
  func shutdown(gracePeriod: Duration) async {
    let restarts = state.withLock { state -> Task<Void, Never>? in
      state.stopped = true
      return state.restarts
    }
    restarts?.cancel()
    await restarts?.value
    let (server, draining) = state.withLock { ($0.server, $0.draining) }
    await server.shutdown(gracePeriod: gracePeriod)
    for drain in draining { await drain.value }
  }
}
