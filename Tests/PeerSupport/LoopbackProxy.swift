import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// An HTTP CONNECT proxy a test started on 127.0.0.1 (``TinyProxy``, ``SquidProxy``): its
/// port, its process, and the temporary directory of its config and logs; stopped by PID.
///
/// `@unchecked Sendable`: every stored property is a `let` of a Sendable type, in this class
/// and its subclasses (which are final); the class is open to them only.
public class LoopbackProxy: @unchecked Sendable {
  public let port: Int
  public let process: ChildProcess
  let directory: URL

  init(port: Int, process: ChildProcess, directory: URL) {
    self.port = port
    self.process = process
    self.directory = directory
  }

  /// `http://[user[:password]@]127.0.0.1:PORT`.
  public func url(user: String? = nil, password: String? = nil) -> String {
    let userInfo = user.map { "\($0)\(password.map { ":\($0)" } ?? "")@" } ?? ""
    return "http://\(userInfo)127.0.0.1:\(port)"
  }

  /// Stops it (SIGCONT first, in case a test froze it; then SIGTERM, then SIGKILL) and
  /// removes its files.
  public func stop() async {
    _ = process.signal(SIGCONT)
    await process.stop(grace: .seconds(3))
    try? FileManager.default.removeItem(at: directory)
  }
}

/// Runs `body` with the proxy `start` starts, and stops it afterwards.
func withLoopbackProxy<Proxy: LoopbackProxy, T>(
  isolation: isolated (any Actor)? = #isolation, _ start: () async throws -> Proxy,
  _ body: (Proxy) async throws -> T
) async throws -> T {
  let proxy = try await start()
  return try await afterwards {
    try await body(proxy)
  } then: {
    await proxy.stop()
  }
}
