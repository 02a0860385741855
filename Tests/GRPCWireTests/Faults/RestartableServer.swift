import Foundation
import PeerSupport
import FleetSync

#if canImport(Glibc)
  import Glibc
#endif

/// A peer server that keeps its port across restarts: killed (SIGKILL), drained (SIGTERM,
/// with interop_server.py's `--shutdown-grace`) and started again with `--port <port>`, as a
/// deployment restarts a backend behind a fixed address.
///
/// Every process it started is stopped by ``stopAll()``; prefer
/// ``withRestartableServer(_:arguments:_:)``, which always calls it.
final class RestartableServer: Sendable {
  let script: String
  let arguments: [String]
  /// The port every generation listens on (the first one's, picked by the OS).
  let port: Int

  private let generations: PosixMutex<[PeerServer]>

  private init(script: String, arguments: [String], first: PeerServer) {
    self.script = script
    self.arguments = arguments
    self.port = first.port
    self.generations = PosixMutex([first])
  }

  static func start(_ script: String, arguments: [String]) async throws -> RestartableServer {
    let first = try await PeerServer.start(script, arguments: arguments)
    return RestartableServer(script: script, arguments: arguments, first: first)
  }

  /// The newest process.
  var current: PeerServer { generations.withLock { $0.last! } }

  /// Every process started so far, oldest first.
  var all: [PeerServer] { generations.withLock { $0 } }

  /// Kills the current process with SIGKILL (no GOAWAY, no FIN from a graceful close: the
  /// kernel closes its sockets) and returns once it has been reaped.
  func kill() async {
    // stop(grace: .zero) is kill(pid, SIGKILL) plus the wait for the exit.
    await current.stop(grace: .zero)
  }

  /// Sends SIGTERM to the current process without waiting for it to end (with
  /// `--shutdown-grace` it drains first).
  func terminate() {
    current.signal(SIGTERM)
  }

  /// Starts a new process on the same port and returns once it listens. A port that is
  /// still taken (the previous process has not released it yet) makes the new process exit
  /// before LISTENING; that is retried for up to `within`.
  @discardableResult
  func restart(within: Duration = .seconds(15)) async throws -> PeerServer {
    let deadline = ContinuousClock.now + within
    while true {
      do {
        let server = try await PeerServer.start(
          script, arguments: arguments + ["--port", "\(port)"])
        generations.withLock { $0.append(server) }
        return server
      } catch let error as ChildProcessError {
        // Each attempt takes the interpreter's start-up time: no extra pause is needed.
        guard case .exitedBeforeListening = error, ContinuousClock.now < deadline else {
          throw error
        }
      }
    }
  }

  /// Stops every process still running (SIGTERM, then SIGKILL).
  func stopAll() async {
    for server in all { await server.stop(grace: .seconds(2)) }
  }
}

/// Runs `body` with a ``RestartableServer`` and stops all its processes afterwards.
func withRestartableServer<T>(
  _ script: String, arguments: [String] = [],
  isolation: isolated (any Actor)? = #isolation,
  _ body: (RestartableServer) async throws -> T
) async throws -> T {
  let server = try await RestartableServer.start(script, arguments: arguments)
  do {
    let result = try await body(server)
    await server.stopAll()
    return result
  } catch {
    await server.stopAll()
    throw error
  }
}
