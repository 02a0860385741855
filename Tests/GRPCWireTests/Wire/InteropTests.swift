import Foundation
import PeerSupport
import Testing

/// `interop-client` — our client, as a separate program with the standard interop flags —
/// passes every interop case against grpcio's server (Tests/Python/interop_server.py, which
/// checks compression flags and reports resets through its relay).
@Suite("gRPC interop cases against grpcio", .timeLimit(.minutes(5)))
struct InteropTests {
  /// One interop server for the suite; the process ends with the test run.
  static let server = Task { try await PeerServer.start("interop_server.py") }

  static let cases = [
    "empty_unary", "large_unary", "client_compressed_unary", "server_compressed_unary",
    "client_streaming", "client_compressed_streaming", "server_streaming",
    "server_compressed_streaming", "ping_pong", "empty_stream", "custom_metadata",
    "status_code_and_message", "special_status_message", "unimplemented_method",
    "unimplemented_service", "cancel_after_begin", "cancel_after_first_response",
    "timeout_on_sleeping_server",
  ]

  @Test("interop-client passes the case", arguments: cases)
  func interopCase(_ name: String) async throws {
    let server = try await Self.server.value
    let result = try await InteropClientProcess.run([
      "--server_host=127.0.0.1", "--server_port=\(server.port)", "--test_case=\(name)",
      "--use_tls=false",
    ])
    #expect(result.status == 0, "interop-client \(name) exited \(result.status):\n\(result.output)")
    #expect(result.output.contains("\(name): PASSED"), "\(result.output)")
  }

  @Test("a cancelled call reaches the server as RST_STREAM(CANCEL)")
  func serverSeesCancellation() async throws {
    let server = try await Self.server.value
    let from = server.lines.count
    let result = try await InteropClientProcess.run([
      "--server_host=127.0.0.1", "--server_port=\(server.port)",
      "--test_case=cancel_after_first_response",
    ])
    #expect(result.status == 0, "\(result.output)")
    let path = "/grpc.testing.TestService/FullDuplexCall"
    let reset = try await server.waitForEvent("rst_stream", path: path, from: from)
    #expect(reset["from"] == "client" && reset["code"] == "CANCEL", "\(reset)")
    _ = try await server.waitForEvent("cancelled", path: path, from: from)
  }

  @Test("interop-client rejects bad flags with a one-line reason and a non-zero exit")
  func badFlags() async throws {
    let unknownCase = try await InteropClientProcess.run([
      "--server_port=1", "--test_case=no_such_case",
    ])
    #expect(unknownCase.status != 0)
    #expect(unknownCase.output.contains("no_such_case"), "\(unknownCase.output)")
    let testCA = try await InteropClientProcess.run(["--server_port=1", "--use_test_ca=true"])
    #expect(testCA.status != 0)
    #expect(testCA.output.contains("--ca_file"), "\(testCA.output)")
  }

  @Test("a case against a port nobody listens on fails with UNAVAILABLE, not a hang")
  func nobodyListening() async throws {
    let port = try unusedPort()
    let result = try await InteropClientProcess.run([
      "--server_host=127.0.0.1", "--server_port=\(port)", "--test_case=empty_unary",
    ])
    #expect(result.status != 0)
    #expect(result.output.contains("UNAVAILABLE"), "\(result.output)")
  }
}

/// Runs the `interop-client` executable built beside the test bundle, to its end; its stdout
/// and stderr interleaved in `stdout`, as a terminal would show them.
enum InteropClientProcess {
  static func run(_ arguments: [String], timeout: Duration = .seconds(60)) async throws
    -> ToolProcess.Result
  {
    try await ToolProcess.run(
      "interop-client", arguments, timeout: timeout, stderr: .mergedIntoStdout)
  }
}

extension ToolProcess.Result {
  /// What interop-client printed, stdout and stderr interleaved (``InteropClientProcess``).
  var output: String { stdout }
}
