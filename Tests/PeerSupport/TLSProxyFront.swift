import Foundation

/// An `https://` proxy for the tests: Debian's HAProxy (installed by scripts/bootstrap) in TCP
/// mode on 127.0.0.1, ending TLS with a test certificate (``TLSFixtures``) and passing what is
/// inside to an HTTP CONNECT proxy behind it (``TinyProxy``). So a client speaks TLS to the
/// proxy, CONNECT inside it, then TLS to the target inside the tunnel. Stopped by PID.
///
/// HAProxy cannot take port 0: it starts on ``unusedPort()``, again on another if that one was
/// taken meanwhile.
public final class TLSProxyFront: LoopbackProxy, @unchecked Sendable {
  /// `https://[user[:password]@]127.0.0.1:PORT`.
  public override func url(user: String? = nil, password: String? = nil) -> String {
    "https" + super.url(user: user, password: password).dropFirst("http".count)
  }

  /// Starts HAProxy presenting `identity`'s certificate in front of `backend`. Throws
  /// ``ChildProcessError/notFound(_:hint:)`` when it is not installed.
  public static func start(
    presenting identity: TLSFixtures.Identity, in fixtures: TLSFixtures, to backend: LoopbackProxy
  ) async throws -> TLSProxyFront {
    let executable = URL(fileURLWithPath: "/usr/sbin/haproxy")
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw ChildProcessError.notFound(executable.path, hint: "scripts/bootstrap installs haproxy")
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("tls-proxy-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    // HAProxy takes the certificate and its key in one PEM file.
    let pem = directory.appendingPathComponent("proxy.pem")
    let certificate = try Data(contentsOf: URL(fileURLWithPath: fixtures.certificate(identity)))
    let key = try Data(contentsOf: URL(fileURLWithPath: fixtures.key(identity)))
    try (certificate + key).write(to: pem)
    return try await startOnUnusedPort { port in
      let config = """
        global
          maxconn 200
        defaults
          mode tcp
          timeout connect 5s
          timeout client 600s
          timeout server 600s
        frontend tls
          bind 127.0.0.1:\(port) ssl crt \(pem.path)
          default_backend proxy
        backend proxy
          server proxy 127.0.0.1:\(backend.port)

        """
      let file = directory.appendingPathComponent("haproxy.cfg")
      try Data(config.utf8).write(to: file)
      // Master-worker in the foreground: the master says "Loading success." once it listens,
      // and takes its worker with it when stopped.
      let process = try ChildProcess(
        executable, ["-W", "-db", "-f", file.path], name: "haproxy", stderr: .mergedIntoStdout)
      do {
        _ = try await process.waitForLine(timeout: .seconds(15), "Loading success") {
          $0.contains("Loading success")
        }
        return TLSProxyFront(port: port, process: process, directory: directory)
      } catch {
        await process.stop(grace: .seconds(1))
        throw error
      }
    }
  }
}

/// Runs `body` with a tinyproxy (with `basicAuth`, if any) behind an HAProxy that ends TLS with
/// `identity`'s certificate: the `https://` proxy and the tinyproxy that logs its requests.
/// Both are stopped afterwards.
public func withTLSProxy<T>(
  presenting identity: TLSFixtures.Identity = .server,
  basicAuth: (user: String, password: String)? = nil,
  isolation: isolated (any Actor)? = #isolation,
  _ body: (TLSProxyFront, TinyProxy) async throws -> T
) async throws -> T {
  let fixtures = try await TLSFixtures.shared
  return try await withTinyProxy(basicAuth: basicAuth) { tinyproxy in
    try await withLoopbackProxy({
      try await TLSProxyFront.start(presenting: identity, in: fixtures, to: tinyproxy)
    }) { front in
      try await body(front, tinyproxy)
    }
  }
}
