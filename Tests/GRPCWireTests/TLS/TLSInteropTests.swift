import Foundation
import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

/// The interop cases again, over TLS: `interop-client --use_tls=true` and `GRPCChannel` with
/// `.tls(…)` against grpcio's interop server behind a TLS relay (Tests/Python/interop_server.py
/// `--tls-cert`: Python's ssl terminates TLS with ALPN h2 and forwards to grpcio, so the
/// server still checks compression flags). Certificates: ``TLSFixtures``.
@Suite("gRPC interop cases over TLS against grpcio", .timeLimit(.minutes(5)))
struct TLSInteropTests {
  /// One TLS interop server (certificate for foo.test.google.fr) for the interop cases.
  static let server = Task {
    try await PeerServer.start(
      "interop_server.py", arguments: try await TLSFixtures.shared.serverArguments(.server))
  }

  static let name = TLSFixtures.serverName

  static func channel(
    host: String = "127.0.0.1", port: Int, override: String? = name, fixtures: TLSFixtures
  ) -> GRPCChannel {
    var options = ChannelOptions()
    options.transportSecurity = .tls(
      TLSConfiguration(
        trustRoots: .pemFile(fixtures.caCertificate), serverHostnameOverride: override))
    return GRPCChannel(host: host, port: port, options: options)
  }

  @Test("interop-client passes the case over TLS", arguments: InteropTests.cases)
  func interopCase(_ name: String) async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await Self.server.value
    let result = try await InteropClientProcess.run([
      "--server_host=127.0.0.1", "--server_port=\(server.port)", "--test_case=\(name)",
      "--use_tls=true", "--ca_file=\(fixtures.caCertificate)",
      "--server_host_override=\(Self.name)",
    ])
    #expect(result.status == 0, "interop-client \(name) exited \(result.status):\n\(result.output)")
    #expect(result.output.contains("\(name): PASSED"), "\(result.output)")
  }

  @Test("interop-client --use_test_ca=true trusts the CA of --ca_file")
  func useTestCA() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await Self.server.value
    let result = try await InteropClientProcess.run([
      "--server_host=127.0.0.1", "--server_port=\(server.port)", "--test_case=large_unary",
      "--use_tls=true", "--use_test_ca=true", "--ca_file=\(fixtures.caCertificate)",
      "--server_host_override=\(Self.name)",
    ])
    #expect(result.status == 0, "\(result.output)")
    #expect(result.output.contains("large_unary: PASSED"), "\(result.output)")
  }

  @Test("interop-client without --ca_file uses the system trust store, which lacks the test CA")
  func systemTrustStore() async throws {
    let server = try await Self.server.value
    let result = try await InteropClientProcess.run([
      "--server_host=127.0.0.1", "--server_port=\(server.port)", "--test_case=empty_unary",
      "--use_tls=true", "--server_host_override=\(Self.name)",
    ])
    #expect(result.status != 0, "\(result.output)")
    #expect(result.output.contains("UNAVAILABLE"), "\(result.output)")
    #expect(
      result.output.contains("certificate verify failed: unable to get local issuer certificate"),
      "\(result.output)")
  }

  @Test("a GRPCChannel with .tls and serverHostnameOverride calls over TLS 1.2+ with ALPN h2")
  func channelWithOverride() async throws {
    let fixtures = try await TLSFixtures.shared
    try await withPeerServer("interop_server.py", arguments: fixtures.serverArguments(.server)) {
      server in
      let channel = Self.channel(port: server.port, fixtures: fixtures)
      defer { channel.close() }
      var request = GRPCTesting.SimpleRequest()
      request.responseSize = 314_159
      request.payload = GRPCTesting.Payload()
      request.payload?.body = [UInt8](repeating: 0, count: 271_828)
      let response = try await channel.unary(
        GRPCTesting.TestService.unaryCall, request, options: CallOptions(timeout: .seconds(30)))
      #expect(response.message.payload?.body == [UInt8](repeating: 0, count: 314_159))
      // The relay's view of the one connection: the handshake's outcome.
      let tls = try await server.waitForEvent("tls")
      #expect(tls["alpn"] == "h2", "\(tls)")
      #expect(["TLSv1.2", "TLSv1.3"].contains(tls["version"] ?? ""), "\(tls)")
      #expect(tls["client_cert"] == "-", "\(tls)")
      #expect(!server.events.contains { $0.kind == "tls_failed" }, "\(server.lines)")
    }
  }

  @Test("a GRPCChannel to localhost without override verifies the name against SAN localhost")
  func localhostWithoutOverride() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await Self.server.value
    let channel = Self.channel(
      host: "localhost", port: server.port, override: nil, fixtures: fixtures)
    defer { channel.close() }
    _ = try await channel.unary(
      GRPCTesting.TestService.emptyCall, GRPCTesting.Empty(),
      options: CallOptions(timeout: .seconds(30)))
  }

  @Test("requests over TLS carry :scheme https")
  func schemeHTTPS() async throws {
    let fixtures = try await TLSFixtures.shared
    try await withPeerServer("interop_server.py", arguments: fixtures.serverArguments(.server)) {
      server in
      let channel = Self.channel(port: server.port, fixtures: fixtures)
      defer { channel.close() }
      _ = try await channel.unary(
        GRPCTesting.TestService.emptyCall, GRPCTesting.Empty(),
        options: CallOptions(timeout: .seconds(30)))
      let request = try await server.waitForEvent(
        "request", path: GRPCTesting.TestService.emptyCall.path)
      #expect(request.header(":scheme") == "https", "\(request)")
    }
  }
}
