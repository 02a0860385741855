import Foundation
import PeerSupport
import Testing

/// Our server role, checked by someone else's client: `interop-server` (grpc.testing.TestService
/// on GRPCServer) against grpcio's client (Tests/Python/interop_client.py), for the standard
/// interop cases and for what a server owes a client beyond them — its own deadline, an
/// unknown method, and a graceful shutdown on SIGTERM.
///
/// Each test starts its own server on a port the OS picks and ends it by PID with SIGTERM,
/// which must make it exit with status 0.
@Suite("grpcio's interop client against our server", .timeLimit(.minutes(5)))
struct ServerInteropTests {
  static let cases = InteropTests.cases

  /// Runs `interop_client.py --test_case=<name>` against `server` and expects `PASS <name>`
  /// (for `all`: a `PASS` line for each of ``cases``).
  static func expectPass(
    _ name: String, against server: PeerServer, _ extra: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let output = try await PythonPeer.run(
      "interop_client.py",
      [
        "--server_host=127.0.0.1", "--server_port=\(server.port)", "--test_case=\(name)",
        "--use_tls=false",
      ] + extra, timeout: .seconds(90))
    output.attach(as: "interop_client-\(name)")
    let lines = Set(output.stdoutText.split(separator: "\n").map(String.init))
    let passed = (name == "all" ? cases : [name]).allSatisfy { lines.contains("PASS \($0)") }
    #expect(
      output.status == 0 && passed,
      """
      grpcio's client failed \(name) against interop-server:
      \(output.transcript)
      --- interop-server stderr ---
      \(server.stderr)
      """,
      sourceLocation: sourceLocation)
  }

  @Test("grpcio's client passes the interop case against our server", arguments: cases)
  func interopCase(_ name: String) async throws {
    let (_, exit) = try await withInteropServer { server in
      try await Self.expectPass(name, against: server)
    }
    #expect(exit == .exited(0), "interop-server after SIGTERM: \(exit)")
  }

  @Test("one server passes every case in a row, each on a new connection")
  func allCasesOnOneServer() async throws {
    let (_, exit) = try await withInteropServer { server in
      try await Self.expectPass("all", against: server)
    }
    #expect(exit == .exited(0), "interop-server after SIGTERM: \(exit)")
  }

  @Test("with its unary handlers on the event loop, the server passes every case in a row")
  func allCasesWithUnaryOnLoop() async throws {
    let (_, exit) = try await withInteropServer(arguments: ["--unary-on-loop"]) { server in
      try await Self.expectPass("all", against: server)
    }
    #expect(exit == .exited(0), "interop-server after SIGTERM: \(exit)")
  }

  @Test("a passed grpc-timeout ends the call with DEADLINE_EXCEEDED; the server stays usable")
  func deadline() async throws {
    let (_, exit) = try await withInteropServer { server in
      try await Self.expectPass("server_deadline", against: server)
    }
    #expect(exit == .exited(0), "interop-server after SIGTERM: \(exit)")
  }

  @Test("an unknown method is UNIMPLEMENTED, Trailers-Only, and the connection stays usable")
  func unknownMethod() async throws {
    let (_, exit) = try await withInteropServer { server in
      try await Self.expectPass("unknown_method", against: server)
    }
    #expect(exit == .exited(0), "interop-server after SIGTERM: \(exit)")
  }

  /// The client sends SIGTERM itself, once a response of each slow stream has arrived.
  @Test(
    "SIGTERM with calls in flight: GOAWAY, calls within the grace period finish, exit 0",
    arguments: ["graceful_shutdown", "shutdown_after_grace"])
  func gracefulShutdown(_ name: String) async throws {
    let (exit, _) = try await withInteropServer { server in
      try await Self.expectPass(name, against: server, ["--server_pid=\(server.pid)"])
      return try await server.waitForExit(timeout: .seconds(10))
    }
    #expect(exit == .exited(0), "interop-server after the client's SIGTERM: \(exit)")
  }
}
