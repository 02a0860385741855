import PeerSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Our `interop-server` executable (built beside the test bundle) as a ``PeerServer`` on
/// 127.0.0.1 with a port the OS picked, for one test: started once it printed
/// `LISTENING <port>`, stopped by PID. Prefer ``withInteropServer(isolation:_:)``, which always
/// stops it.
enum InteropServerProcess {
  /// Starts `interop-server --port 0 --host 127.0.0.1 <extra…>` and waits for its port.
  static func start(arguments extra: [String] = []) async throws -> PeerServer {
    try await PeerServer.start(
      tool: "interop-server", arguments: ["--port", "0", "--host", "127.0.0.1"] + extra)
  }
}

/// Runs `body` with a started `interop-server` (given `arguments`) and stops it afterwards (SIGTERM, SIGKILL after
/// 10 s), whether `body` returns or throws; returns what `body` returned and how the server
/// ended.
func withInteropServer<T>(
  isolation: isolated (any Actor)? = #isolation, arguments: [String] = [],
  _ body: (PeerServer) async throws -> T
) async throws -> (result: T, exit: ChildProcess.Exit) {
  let server = try await InteropServerProcess.start(arguments: arguments)
  let result = try await withPeerServer(server, grace: .seconds(10), body)
  return (result, server.exitStatus ?? .signalled(SIGKILL))
}
