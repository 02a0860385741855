import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

/// Server-side mutual TLS: client certificates checked against `tlsClientCAFile`.
@Suite("Our server with client certificates", .timeLimit(.minutes(1)))
struct ServerMutualTLSTests {
  static func makeServer(_ fixtures: TLSFixtures, require: Bool) -> GRPCServer {
    var options = ServerOptions()
    options.tls = (fixtures.certificate(.server), fixtures.key(.server))
    options.tlsClientCAFile = fixtures.caCertificate
    options.tlsRequireClientCertificate = require
    let server = GRPCServer(options: options)
    server.register(unary: GRPCTesting.TestService.emptyCall) { _, _ in GRPCTesting.Empty() }
    return server
  }

  /// A channel to `port` trusting the test CA, presenting `certificate` (chain, key) if given.
  static func channel(
    _ fixtures: TLSFixtures, _ port: Int, certificate: (String, String)?
  ) -> GRPCChannel {
    var options = ChannelOptions()
    options.backoff.minimumConnectTimeout = .seconds(2)
    options.transportSecurity = .tls(
      TLSConfiguration(
        trustRoots: .pemFile(fixtures.caCertificate),
        serverHostnameOverride: TLSFixtures.serverName,
        clientCertificateChainFile: certificate?.0, clientPrivateKeyFile: certificate?.1))
    return GRPCChannel(host: "127.0.0.1", port: port, options: options)
  }

  static func call(_ channel: GRPCChannel) async throws {
    _ = try await channel.unary(GRPCTesting.TestService.emptyCall, GRPCTesting.Empty())
  }

  @Test("required: a client with a certificate of the CA is served; one without is refused; the server serves on")
  func required() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = Self.makeServer(fixtures, require: true)
    let port = try await server.start()
    let without = Self.channel(fixtures, port, certificate: nil)
    defer { without.close() }
    let error = try await #require(throws: RPCError.self) { try await Self.call(without) }
    #expect(error.code == .unavailable, "\(error)")
    let with = Self.channel(fixtures, port, certificate: (fixtures.clientCertificate, fixtures.clientKey))
    defer { with.close() }
    try await Self.call(with)
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("optional: a client without a certificate is served; one whose certificate another CA signed is refused")
  func optional() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = Self.makeServer(fixtures, require: false)
    let port = try await server.start()
    let without = Self.channel(fixtures, port, certificate: nil)
    defer { without.close() }
    try await Self.call(without)
    let foreign = Self.channel(
      fixtures, port, certificate: (fixtures.certificate(.untrusted), fixtures.key(.untrusted)))
    defer { foreign.close() }
    let error = try await #require(throws: RPCError.self) { try await Self.call(foreign) }
    #expect(error.code == .unavailable, "\(error)")
    try await Self.call(without)
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a client CA file that cannot be read fails start with a clear error")
  func badCAFile() async throws {
    let fixtures = try await TLSFixtures.shared
    var options = ServerOptions()
    options.tls = (fixtures.certificate(.server), fixtures.key(.server))
    options.tlsClientCAFile = "/nonexistent/ca.pem"
    let server = GRPCServer(options: options)
    let error = try await #require(throws: RPCError.self) { _ = try await server.start() }
    #expect(error.message.contains("/nonexistent/ca.pem"), "\(error)")
  }
}
