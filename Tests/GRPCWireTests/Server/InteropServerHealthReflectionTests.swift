import PeerSupport
import Testing

/// `interop-server` as grpcio's health-checking and reflection clients see it
/// (Tests/Python/health_reflection_client.py).
@Suite("interop-server health and reflection, by grpcio's clients", .timeLimit(.minutes(2)))
struct InteropServerHealthReflectionTests {
  @Test("grpcio: health SERVING, NOT_FOUND; reflection builds UnaryCall; NOT_SERVING on SIGTERM")
  func grpcioClients() async throws {
    let server = try await InteropServerProcess.start()
    let result = try await HealthReflectionPeer.run(
      port: server.port, call: .unaryCall, serving: ["grpc.testing.TestService"],
      stopping: server.pid)
    #expect(
      result.passed,
      "\(result.output.transcript)\n--- interop-server stderr ---\n\(server.stderr)")
    for check in [
      "health.check.serving[grpc.testing.TestService]", "health.check.unknown_is_not_found",
      "v1alpha.unary_call", "v1.unary_call",
      "health.watch.not_serving_on_shutdown[grpc.testing.TestService]",
    ] {
      #expect(result.checks.contains(check), "\(check) did not pass: \(result.output.transcript)")
    }
    #expect(try await server.waitForExit() == .exited(0))
  }
}
