import Foundation
import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

/// Every way a TLS connection can fail ends the call quickly with UNAVAILABLE and a message
/// naming the cause, with OpenSSL's own verify text where a certificate is refused.
///
/// Each row starts its own server: the interop server (a real gRPC server that would answer
/// if the handshake succeeded, so only the refusal can fail the call), Tests/Python/
/// tls_raw_server.py for TLS servers that are not HTTP/2 servers, and the interop server
/// without TLS for "TLS asked, plaintext found". The verify texts are what
/// `openssl s_client -verify_return_error` prints for the same server (Tests/Python/
/// tls_selfcheck.py checks them).
@Suite("TLS failures as RPCError", .timeLimit(.minutes(3)))
struct TLSNegativeTests {
  /// The server a row calls.
  enum Peer: Sendable {
    /// interop_server.py presenting this certificate, maybe requiring a client certificate.
    case interop(TLSFixtures.Identity, requireClientCertificate: Bool = false)
    /// interop_server.py `--direct`: grpcio's own TLS (BoringSSL) presenting this
    /// certificate, maybe requiring a client certificate.
    case grpcioTLS(TLSFixtures.Identity, requireClientCertificate: Bool = false)
    /// interop_server.py without TLS.
    case plaintextInterop
    /// tls_raw_server.py in this `--mode`.
    case raw(String)

    /// The script and its arguments.
    func command(_ fixtures: TLSFixtures) -> (script: String, arguments: [String]) {
      switch self {
      case .interop(let identity, let requireClientCertificate):
        (
          "interop_server.py",
          fixtures.serverArguments(identity, requireClientCertificate: requireClientCertificate)
        )
      case .grpcioTLS(let identity, let requireClientCertificate):
        (
          "interop_server.py",
          ["--direct"]
            + fixtures.serverArguments(
              identity, requireClientCertificate: requireClientCertificate)
        )
      case .plaintextInterop:
        ("interop_server.py", [])
      case .raw(let mode):
        ("tls_raw_server.py", ["--mode", mode] + fixtures.serverArguments(.server))
      }
    }
  }

  /// What the error's message must show; `host:port` is the channel's.
  enum Expected: Sendable {
    /// A failed handshake: the message starts "TLS handshake with <host>:<port> failed: " and
    /// contains this text (nothing more when empty).
    case handshakeFailed(String)
    /// The message contains this text.
    case contains(String)
    /// A server that refuses the client afterwards (TLS 1.3 mutual TLS: the client's
    /// handshake may complete before the server has checked the client's certificate): the
    /// handshake prefix as above, or an interrupted UNAVAILABLE from the first read.
    case handshakeFailedOrInterrupted
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var peer: Peer
    var host = "127.0.0.1"
    /// nil: no override, the channel's host is the name verified and sent as SNI.
    var override: String? = TLSFixtures.serverName
    var systemTrust = false
    var expected: Expected

    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "unknown CA", peer: .interop(.untrusted),
      expected: .handshakeFailed(
        "certificate verify failed: unable to get local issuer certificate")),
    Row(
      name: "test CA not in the system trust store", peer: .interop(.server), systemTrust: true,
      expected: .handshakeFailed(
        "certificate verify failed: unable to get local issuer certificate")),
    Row(
      name: "wrong host name (override)", peer: .interop(.wrongName),
      expected: .handshakeFailed("certificate verify failed: hostname mismatch")),
    Row(
      name: "wrong host name (localhost, no override)", peer: .interop(.wrongName),
      host: "localhost", override: nil,
      expected: .handshakeFailed("certificate verify failed: hostname mismatch")),
    Row(
      name: "expired certificate", peer: .interop(.expired),
      expected: .handshakeFailed("certificate verify failed: certificate has expired")),
    Row(
      name: "plaintext server when TLS was asked", peer: .plaintextInterop,
      expected: .handshakeFailed("")),
    Row(
      name: "server without ALPN", peer: .raw("no-alpn"),
      expected: .contains("did not agree to HTTP/2 (ALPN h2)")),
    Row(
      name: "server with ALPN http/1.1 only", peer: .raw("alpn-http11"),
      expected: .contains("did not agree to HTTP/2 (ALPN h2)")),
    Row(
      name: "server with TLS 1.1 at most", peer: .raw("tls11"), expected: .handshakeFailed("")),
    Row(
      name: "server closing after the ClientHello", peer: .raw("close-after-hello"),
      expected: .handshakeFailed("")),
    Row(
      name: "mutual TLS required, no client certificate",
      peer: .interop(.server, requireClientCertificate: true),
      expected: .handshakeFailedOrInterrupted),
    Row(
      name: "mutual TLS required by grpcio's own TLS, no client certificate",
      peer: .grpcioTLS(.server, requireClientCertificate: true),
      expected: .handshakeFailedOrInterrupted),
  ]

  /// Long enough never to fire when the client works; a row that ends at it has hung.
  static let callTimeout = Duration.seconds(20)

  @Test("the call fails fast with UNAVAILABLE and a message naming the cause", arguments: rows)
  func failure(_ row: Row) async throws {
    let fixtures = try await TLSFixtures.shared
    let (script, arguments) = row.peer.command(fixtures)
    try await withPeerServer(script, arguments: arguments) { server in
      var options = ChannelOptions()
      options.transportSecurity = .tls(
        TLSConfiguration(
          trustRoots: row.systemTrust ? .system : .pemFile(fixtures.caCertificate),
          serverHostnameOverride: row.override))
      let channel = GRPCChannel(host: row.host, port: server.port, options: options)
      defer { channel.close() }

      let started = ContinuousClock.now
      let error = try await #require(throws: RPCError.self) {
        _ = try await channel.unary(
          GRPCTesting.TestService.emptyCall, GRPCTesting.Empty(),
          options: CallOptions(timeout: Self.callTimeout))
      }
      let elapsed = ContinuousClock.now - started
      #expect(error.code != .deadlineExceeded, "hung until the deadline: \(error)")
      #expect(error.code == .unavailable, "\(error)")
      #expect(elapsed < .seconds(10), "took \(elapsed): \(error)")
      expect(
        error, matches: row.expected,
        prefix: "TLS handshake with \(row.host):\(server.port) failed: ")
      // A refused server never sees a request: the relay would have printed it first.
      if case .interop = row.peer {
        #expect(!server.events.contains { $0.kind == "request" }, "\(server.lines)")
      }
    }
  }

  func expect(_ error: RPCError, matches expected: Expected, prefix: String) {
    switch expected {
    case .handshakeFailed(let text):
      #expect(error.message.hasPrefix(prefix), "\(error.message)")
      // (`contains("")` is false for Foundation's String.contains.)
      #expect(text.isEmpty || error.message.contains(text), "\(error.message)")
    case .contains(let text):
      #expect(error.message.contains(text), "\(error.message)")
    case .handshakeFailedOrInterrupted:
      #expect(
        error.message.contains("TLS handshake with") || error.isInterrupted,
        "neither a handshake failure nor an interrupted call: \(error)")
    }
  }

  @Test("with the client certificate, the server that requires one accepts the call")
  func mutualTLS() async throws {
    let fixtures = try await TLSFixtures.shared
    try await withPeerServer(
      "interop_server.py",
      arguments: fixtures.serverArguments(.server, requireClientCertificate: true)
    ) { server in
      var options = ChannelOptions()
      options.transportSecurity = .tls(
        TLSConfiguration(
          trustRoots: .pemFile(fixtures.caCertificate),
          serverHostnameOverride: TLSFixtures.serverName,
          clientCertificateChainFile: fixtures.clientCertificate,
          clientPrivateKeyFile: fixtures.clientKey))
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port, options: options)
      defer { channel.close() }
      _ = try await channel.unary(
        GRPCTesting.TestService.emptyCall, GRPCTesting.Empty(),
        options: CallOptions(timeout: Self.callTimeout))
      let tls = try await server.waitForEvent("tls")
      #expect(tls["client_cert"] == TLSFixtures.clientName, "\(tls)")
      #expect(tls["alpn"] == "h2", "\(tls)")
    }
  }
}
