import Foundation
import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

/// Our server serves TLS (1.2+, ALPN h2) with a certificate the tests make, and our client
/// passes every interop case against it over TLS.
@Suite("Our server over TLS", .timeLimit(.minutes(3)))
struct ServerTLSTests {
  static let cases = InteropTests.cases

  @Test("interop-client passes the case against interop-server over TLS", arguments: cases)
  func interopOverTLS(_ name: String) async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await InteropServerProcess.start(arguments: [
      "--tls-cert", fixtures.certificate(.server), "--tls-key", fixtures.key(.server),
    ])
    defer { Task { await server.stop() } }
    let result = try await InteropClientProcess.run([
      "--server_host=127.0.0.1", "--server_port=\(server.port)", "--test_case=\(name)",
      "--use_tls=true", "--use_test_ca=true", "--ca_file=\(fixtures.caCertificate)",
      "--server_host_override=\(TLSFixtures.serverName)",
    ])
    #expect(result.status == 0, "\(result.output)")
    #expect(result.output.contains("\(name): PASSED"), "\(result.output)")
  }

  @Test("a plaintext client to our TLS server fails cleanly, and the server keeps serving")
  func plaintextClient() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await InteropServerProcess.start(arguments: [
      "--tls-cert", fixtures.certificate(.server), "--tls-key", fixtures.key(.server),
    ])
    defer { Task { await server.stop() } }
    var plainOptions = ChannelOptions()
    plainOptions.backoff.minimumConnectTimeout = .seconds(2)
    let plain = GRPCChannel(host: "127.0.0.1", port: server.port, options: plainOptions)
    defer { plain.close() }
    let error = try await #require(throws: RPCError.self) {
      _ = try await plain.unary(GRPCTesting.TestService.emptyCall, GRPCTesting.Empty())
    }
    #expect(error.code == .unavailable, "\(error)")
    var options = ChannelOptions()
    options.transportSecurity = .tls(
      TLSConfiguration(
        trustRoots: .pemFile(fixtures.caCertificate),
        serverHostnameOverride: TLSFixtures.serverName))
    let secure = GRPCChannel(host: "127.0.0.1", port: server.port, options: options)
    defer { secure.close() }
    _ = try await secure.unary(GRPCTesting.TestService.emptyCall, GRPCTesting.Empty())
  }
}
