import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Debian's squid (installed by scripts/bootstrap) as an HTTP CONNECT proxy on 127.0.0.1 that
/// asks for Basic authentication, checked by squid's own `basic_ncsa_auth` against a password
/// file made here (an `openssl passwd -apr1` hash). It runs in the foreground (`-N`) with a
/// config of its own in a temporary directory, its access log there in squid's native format;
/// stopped by PID.
///
/// Unlike tinyproxy, squid answers a wrong password with 407, as RFC 9110 §15.5.8 has it.
/// squid cannot take port 0: it starts on ``unusedPort()``, again on another if that one was
/// taken meanwhile. It is ready when its socket listens (read from /proc/net/tcp), not when it
/// says so: its "Accepting HTTP Socket connections" line comes just before.
public final class SquidProxy: LoopbackProxy, @unchecked Sendable {
  /// squid's access log as it is on disk: a line per request, written when the request ends
  /// (for a tunnel, when it closes).
  public var accessLog: String {
    (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8))
      ?? ""
  }

  /// The access log's requests so far, in order: `METHOD URL STATUS` (the native format's
  /// sixth, seventh and fourth fields: `CONNECT 127.0.0.1:4711 407`).
  public var requests: [String] {
    accessLog.split(separator: "\n").compactMap { line in
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 7, let status = fields[3].split(separator: "/").last else {
        return nil
      }
      return "\(fields[5]) \(fields[6]) \(status)"
    }
  }

  /// Starts squid, letting CONNECT through for `user` with `password` only. Throws
  /// ``ChildProcessError/notFound(_:hint:)`` when squid is not installed.
  public static func start(user: String, password: String) async throws -> SquidProxy {
    let executable = URL(fileURLWithPath: "/usr/sbin/squid")
    let checker = "/usr/lib/squid/basic_ncsa_auth"
    for path in [executable.path, checker]
    where !FileManager.default.isExecutableFile(atPath: path) {
      throw ChildProcessError.notFound(path, hint: "scripts/bootstrap installs squid")
    }
    // Started as root, squid runs as the user `proxy`: it must write its logs here and read
    // the password file.
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("squid-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(
      at: directory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o777])
    let hash = try await ChildProcess(
      URL(fileURLWithPath: "/usr/bin/openssl"), ["passwd", "-apr1", "-stdin"],
      stdin: Array(password.utf8)
    ).output(within: .seconds(10))
    guard hash.status == 0, hash.stdoutText.hasPrefix("$apr1$") else {
      throw ChildProcessError.exited(
        waitingFor: "openssl passwd -apr1 to print a hash", hash.exit,
        stdout: [hash.stdoutText], stderr: hash.stderr)
    }
    let passwords = directory.appendingPathComponent("passwd")
    try Data("\(user):\(hash.stdoutText)".utf8).write(to: passwords)
    return try await startOnUnusedPort { port in
      let config = """
        http_port 127.0.0.1:\(port)
        pid_filename \(directory.path)/squid.pid
        cache_log \(directory.path)/cache.log
        access_log stdio:\(directory.path)/access.log squid
        coredump_dir \(directory.path)
        cache deny all
        cache_mem 8 MB
        netdb_filename none
        pinger_enable off
        shutdown_lifetime 0 seconds
        auth_param basic program \(checker) \(passwords.path)
        auth_param basic realm fleet-test
        acl authenticated proxy_auth REQUIRED
        http_access allow authenticated
        http_access deny all

        """
      let file = directory.appendingPathComponent("squid.conf")
      try Data(config.utf8).write(to: file)
      let process = try ChildProcess(
        executable, ["-N", "-d", "1", "-f", file.path], name: "squid", stderr: .mergedIntoStdout)
      do {
        _ = try await process.waitForLine(timeout: .seconds(15), "Accepting HTTP Socket") {
          $0.contains("Accepting HTTP Socket connections")
        }
        // squid prints that line just before its listen(2) takes effect: a connection made
        // at once is sometimes refused.
        try await process.waitUntil("squid to listen on 127.0.0.1:\(port)", timeout: .seconds(15)) {
          isListening(onLoopbackPort: port)
        }
        return SquidProxy(port: port, process: process, directory: directory)
      } catch {
        await process.stop(grace: .seconds(1))
        throw error
      }
    }
  }
}

/// Runs `body` with a squid asking for `user` and `password`, and stops it afterwards.
public func withSquidProxy<T>(
  user: String, password: String, isolation: isolated (any Actor)? = #isolation,
  _ body: (SquidProxy) async throws -> T
) async throws -> T {
  try await withLoopbackProxy({ try await SquidProxy.start(user: user, password: password) }, body)
}
