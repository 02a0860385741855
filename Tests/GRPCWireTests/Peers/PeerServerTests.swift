import Foundation
import PeerSupport
import FleetSync
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The Python peer servers start, listen, report, and stop for good — the ground the wire tests
/// stand on. Several run at once here, as they do under `swift test --parallel`.
@Suite("Peer servers")
struct PeerServerTests {
  static let scripts = ["interop_server.py", "raw_h2_server.py"]

  @Test(
    "a server listens on its port, reports the connection, and is gone after stop",
    arguments: scripts)
  func startConnectStop(script: String) async throws {
    let server = try await PeerServer.start(script)
    let pid = server.pid

    let socket = try connectTCP(port: server.port)
    let opened = try await server.waitForEvent("connection_opened")
    #expect(opened.path == nil && opened["conn"] == "1", "\(opened)")
    close(socket)

    let status = await server.stop()
    #expect(status == .exited(0), "SIGTERM should end \(script) cleanly; stderr:\n\(server.stderr)")
    #expect(isGone(pid), "process \(pid) is still there after stop")
    #expect(await server.stop() == status, "a second stop changes nothing")
  }

  @Test("servers run side by side, each on its own port")
  func manyAtOnce() async throws {
    let servers = try await withThrowingTaskGroup(of: PeerServer.self) { group in
      for index in 0..<6 {
        group.addTask { try await PeerServer.start(Self.scripts[index % 2]) }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(Set(servers.map(\.port)).count == servers.count)
    for server in servers {
      close(try connectTCP(port: server.port))
    }
    for server in servers {
      await server.stop()
      #expect(isGone(server.pid))
    }
  }

  @Test("withPeerServer stops the server when the body throws")
  func stopsOnThrow() async throws {
    struct Planned: Error {}
    let pid = PosixMutex<pid_t>(0)
    await #expect(throws: Planned.self) {
      try await withPeerServer("raw_h2_server.py") { server in
        pid.withLock { $0 = server.pid }
        throw Planned()
      }
    }
    let started = pid.withLock { $0 }
    #expect(started > 0 && isGone(started))
  }

  @Test("a server that cannot start fails the test with its stderr")
  func failsToStart() async throws {
    let error = await #expect(throws: ChildProcessError.self) {
      try await PeerServer.start("interop_server.py", arguments: ["--port", "-5"])
    }
    guard case .exitedBeforeListening(_, let status, _, let stderr) = try #require(error) else {
      Issue.record("unexpected error: \(String(describing: error))")
      return
    }
    #expect(status == .exited(2))
    #expect(stderr.contains("--port must be 0...65535"), "stderr:\n\(stderr)")

    await #expect(throws: ChildProcessError.self) {
      try await PeerServer.start("no_such_server.py")
    }
  }

  @Test("a wait for a line that never comes times out with the server's output")
  func waitTimesOut() async throws {
    try await withPeerServer("raw_h2_server.py") { server in
      let error = await #expect(throws: ChildProcessError.self) {
        try await server.waitForEvent("never_printed", timeout: .milliseconds(200))
      }
      guard case .timedOut(let what, _, _, _) = try #require(error) else {
        Issue.record("unexpected error: \(String(describing: error))")
        return
      }
      #expect(what.contains("never_printed"))
    }
  }

  @Test("grpcio's own client passes the interop cases and hooks against interop_server.py")
  func interopServerSelfCheck() async throws {
    let output = try await PythonPeer.run("interop_selfcheck.py", timeout: .seconds(180))
    if output.status != 0 { output.attach(as: "interop_selfcheck") }
    #expect(output.status == 0, "interop_selfcheck.py:\n\(output.transcript)")
  }
}

/// A connected TCP socket to 127.0.0.1:`port` (plain POSIX, nothing of ours in between).
private func connectTCP(port: Int) throws -> Int32 {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = in_port_t(UInt16(port).bigEndian)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  let result = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  guard result == 0 else {
    let code = errno
    close(fd)
    throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
  }
  return fd
}

/// Whether no process has this PID any more (it was reaped, not just a zombie).
private func isGone(_ pid: pid_t) -> Bool {
  kill(pid, 0) == -1 && errno == ESRCH
}
