import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Debian's tinyproxy (installed by scripts/bootstrap) as an HTTP CONNECT proxy on 127.0.0.1,
/// in the foreground (`-d`) with its log on stdout (a line at a time), optionally with Basic authentication;
/// stopped by PID.
///
/// tinyproxy cannot take port 0: it starts on ``unusedPort()``, again on another if that one
/// was taken meanwhile (``startOnUnusedPort(attempts:isolation:_:)``).
public final class TinyProxy: LoopbackProxy, @unchecked Sendable {
  /// What tinyproxy logged so far: one line per connection and request it saw.
  public var log: String { process.lines.joined(separator: "\n") }

  /// The requests tinyproxy logged so far (`CONNECT host:port HTTP/1.1`), in order.
  public var requests: [String] {
    process.lines.compactMap { line in
      guard line.contains("Request ("), let range = line.range(of: "): ") else { return nil }
      return String(line[range.upperBound...])
    }
  }

  /// Waits until tinyproxy has logged at least `count` requests (its log reaches us through a
  /// pipe, after the client may already have its answer); returns them.
  @discardableResult
  public func waitForRequests(_ count: Int, timeout: Duration = .seconds(10)) async throws -> [String] {
    try await process.waitUntil("tinyproxy to log \(count) requests", timeout: timeout) {
      requests.count >= count
    }
    return requests
  }

  /// Starts tinyproxy; with `basicAuth`, CONNECT needs those credentials (without any it
  /// answers 407). Throws ``ChildProcessError/notFound(_:hint:)`` when it is not installed.
  public static func start(basicAuth: (user: String, password: String)? = nil) async throws
    -> TinyProxy
  {
    let executable = URL(fileURLWithPath: "/usr/bin/tinyproxy")
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw ChildProcessError.notFound(executable.path, hint: "scripts/bootstrap installs tinyproxy")
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("tinyproxy-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return try await startOnUnusedPort { port in
      var config = """
        Port \(port)
        Listen 127.0.0.1
        Timeout 600
        LogLevel Info
        MaxClients 200
        DisableViaHeader Yes
        PidFile "\(directory.path)/tinyproxy.pid"

        """
      if let basicAuth { config += "BasicAuth \(basicAuth.user) \(basicAuth.password)\n" }
      let file = directory.appendingPathComponent("tinyproxy.conf")
      try Data(config.utf8).write(to: file)
      let process = try ChildProcess(executable, ["-d", "-c", file.path], name: "tinyproxy")
      do {
        _ = try await process.waitForLine(timeout: .seconds(15), "Accepting connections") {
          $0.contains("Accepting connections")
        }
        return TinyProxy(port: port, process: process, directory: directory)
      } catch {
        await process.stop(grace: .seconds(1))
        throw error
      }
    }
  }

  /// Freezes it (SIGSTOP): connections stay open but nothing moves through them, as on a dead
  /// network path.
  public func freeze() { _ = process.signal(SIGSTOP) }

  /// Lets it run again (SIGCONT).
  public func thaw() { _ = process.signal(SIGCONT) }
}

/// Runs `body` with a tinyproxy running, and stops it afterwards.
public func withTinyProxy<T>(
  basicAuth: (user: String, password: String)? = nil,
  isolation: isolated (any Actor)? = #isolation, _ body: (TinyProxy) async throws -> T
) async throws -> T {
  try await withLoopbackProxy({ try await TinyProxy.start(basicAuth: basicAuth) }, body)
}
