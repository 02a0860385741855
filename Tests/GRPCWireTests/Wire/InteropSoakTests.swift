import Foundation
import PeerSupport
import Testing

/// gRPC's soak cases and connection scaling, run by `interop-client` as interop runners run
/// them: `rpc_soak` (1,000 large_unary calls on one channel) and `channel_soak` (200, each on
/// a new channel) against grpcio's interop server and against ours, plaintext and TLS; and
/// `max_concurrent_streams_connection_scaling` against grpcio's with a stream limit of 1.
///
/// The per-iteration latency limit is 5 s rather than the flag's default 1 s: the cases run
/// beside other builds on a shared machine, and what they prove is that every call of a long
/// sequence succeeds, not how fast (fleet-load measures that).
@Suite("gRPC interop soak cases", .timeLimit(.minutes(10)))
struct InteropSoakTests {
  enum Peer: String, CaseIterable, CustomTestStringConvertible {
    case grpcio, grpcioTLS, ours, oursTLS
    var testDescription: String { rawValue }
  }

  static let soakFlags = [
    "--soak_max_failures=0", "--soak_per_iteration_max_acceptable_latency_ms=5000",
    "--soak_overall_timeout_seconds=300", "--soak_min_time_ms_between_rpcs=0",
  ]

  @Test("rpc_soak: 1,000 large_unary calls on one channel all succeed", arguments: Peer.allCases)
  func rpcSoak(_ peer: Peer) async throws {
    try await runSoak("rpc_soak", iterations: 1_000, against: peer)
  }

  @Test("channel_soak: 200 large_unary calls, each on a new channel, all succeed",
    arguments: Peer.allCases)
  func channelSoak(_ peer: Peer) async throws {
    try await runSoak("channel_soak", iterations: 200, against: peer)
  }

  private func runSoak(_ name: String, iterations: Int, against peer: Peer) async throws {
    let flags = ["--test_case=\(name)", "--soak_iterations=\(iterations)"] + Self.soakFlags
    let result = try await withServer(peer) { port, tlsFlags in
      try await InteropClientProcess.run(
        ["--server_host=127.0.0.1", "--server_port=\(port)"] + tlsFlags + flags,
        timeout: .seconds(360))
    }
    #expect(result.status == 0, "interop-client \(name) exited \(result.status):\n\(result.output)")
    #expect(result.output.contains("\(name): PASSED"), "\(result.output)")
    #expect(
      result.output.contains("soak test ran: \(iterations) of \(iterations) iterations. total_failures: 0."),
      "\(result.output)")
  }

  /// Runs `body` with the port of `peer`'s interop server and the client's TLS flags.
  private func withServer<T>(
    _ peer: Peer, _ body: (Int, [String]) async throws -> T
  ) async throws -> T {
    let fixtures = try await TLSFixtures.shared
    let tlsFlags = [
      "--use_tls=true", "--use_test_ca=true", "--ca_file=\(fixtures.caCertificate)",
      "--server_host_override=\(TLSFixtures.serverName)",
    ]
    switch peer {
    case .grpcio:
      return try await body(InteropTests.server.value.port, ["--use_tls=false"])
    case .grpcioTLS:
      return try await body(TLSInteropTests.server.value.port, tlsFlags)
    case .ours:
      return try await withInteropServer { try await body($0.port, ["--use_tls=false"]) }.result
    case .oursTLS:
      let arguments = ["--tls-cert", fixtures.certificate(.server), "--tls-key", fixtures.key(.server)]
      return try await withInteropServer(arguments: arguments) {
        try await body($0.port, tlsFlags)
      }.result
    }
  }

  @Test("max_concurrent_streams_connection_scaling: a second stream past a limit of 1 gets a connection of its own")
  func connectionScaling() async throws {
    try await withPeerServer(
      "interop_server.py", arguments: ["--grpc-arg", "grpc.max_concurrent_streams=1"]
    ) { server in
      let name = "max_concurrent_streams_connection_scaling"
      let result = try await InteropClientProcess.run([
        "--server_host=127.0.0.1", "--server_port=\(server.port)", "--test_case=\(name)",
      ])
      #expect(result.status == 0, "interop-client \(name) exited \(result.status):\n\(result.output)")
      #expect(result.output.contains("\(name): PASSED"), "\(result.output)")
      // The relay in front of grpcio saw the two calls arrive, each on its own connection.
      let path = "/grpc.testing.TestService/FullDuplexCall"
      let first = try await server.waitForEvent("request", path: path)
      let second = try await server.waitForEvent("request", path: path) { $0["conn"] != first["conn"] }
      #expect(first["conn"] != nil && second["conn"] != nil, "\(first) / \(second)")
    }
  }
}
