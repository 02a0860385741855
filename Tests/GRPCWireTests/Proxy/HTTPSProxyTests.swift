import Foundation
import GRPCTestingProtos
import PeerSupport
import Testing

@testable import GRPCWire

/// Through an `https://` proxy — Debian's HAProxy ending TLS in front of Debian's tinyproxy,
/// both started on loopback — to grpcio's interop server over TLS: TLS to the proxy, CONNECT
/// inside it, TLS to the target inside the tunnel (TLS in TLS); the proxy's certificate checked,
/// Basic authentication, `HTTPS_PROXY=https://…` from the environment.
@Suite(
  "https:// proxies: TLS to the proxy, TLS to the target inside it", .serialized,
  .timeLimit(.minutes(5)))
struct HTTPSProxyTests {
  typealias TestService = GRPCTesting.TestService

  @Test(
    "interop-client passes the interop cases over TLS through the https:// proxy of HTTPS_PROXY, which sees only CONNECT"
  )
  func interopCasesFromEnvironment() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await TLSInteropTests.server.value
    try await withTLSProxy { front, tinyproxy in
      // The proxy's certificate is checked against the channel's trust roots (the test CA).
      try await ProxyTunnelTests.interopCases(
        port: server.port, fixtures, environment: ["HTTPS_PROXY": front.url()])
      // One tunnel per case; cancel_after_begin may exit before its CONNECT went out.
      let requests = try await tinyproxy.waitForRequests(InteropTests.cases.count - 1)
      #expect(
        (InteropTests.cases.count - 1...InteropTests.cases.count).contains(requests.count),
        "\(tinyproxy.log)")
      #expect(
        requests.allSatisfy { $0 == "CONNECT 127.0.0.1:\(server.port) HTTP/1.1" }, "\(requests)")
    }
  }

  @Test(
    "a channel with an https:// proxy URL verifies the proxy (SNI and name) and the target inside the tunnel"
  )
  func channelThroughHTTPSProxy() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await TLSInteropTests.server.value
    try await withTLSProxy { front, tinyproxy in
      // `localhost` as the proxy's name: its SNI and the name its certificate must carry.
      let proxyURL = "https://localhost:\(front.port)"
      let channel = ProxyTunnelTests.channel(
        host: "localhost", port: server.port, proxy: .url(proxyURL), override: nil,
        fixtures: fixtures)
      defer { channel.close() }
      // Large messages: many TLS records inside many TLS records, both ways.
      var request = GRPCTesting.SimpleRequest()
      request.responseSize = 314_159
      request.payload = GRPCTesting.Payload()
      request.payload?.body = [UInt8](repeating: 7, count: 271_828)
      let response = try await channel.unary(
        TestService.unaryCall, request, options: CallOptions(timeout: .seconds(30)))
      #expect(response.message.payload?.body == [UInt8](repeating: 0, count: 314_159))
      // The target saw our TLS (SNI localhost, ALPN h2) through the tunnel.
      let tls = try await server.waitForEvent("tls") { $0["sni"] == "localhost" }
      #expect(tls["alpn"] == "h2", "\(tls)")
      #expect(
        try await tinyproxy.waitForRequests(1) == ["CONNECT localhost:\(server.port) HTTP/1.1"],
        "\(tinyproxy.log)")
    }
  }

  @Test(
    "a proxy whose certificate is not trusted is UNAVAILABLE naming the proxy and the TLS failure; proxyTrustRoots can trust it"
  )
  func untrustedProxyCertificate() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await TLSInteropTests.server.value
    try await withTLSProxy(presenting: .untrusted) { front, tinyproxy in
      let channel = ProxyTunnelTests.channel(
        port: server.port, proxy: .url(front.url()), fixtures: fixtures)
      defer { channel.close() }
      do {
        try await ProxyTunnelTests.emptyCall(channel)
        Issue.record("a proxy with an untrusted certificate was used")
      } catch let error as RPCError {
        #expect(error.code == .unavailable, "\(error)")
        #expect(
          error.message.contains(
            "TLS handshake with the proxy \(front.url()) failed: certificate verify failed: "
              + "unable to get local issuer certificate"), "\(error.message)")
      }
      // Nothing reached the proxy behind the TLS.
      #expect(tinyproxy.requests.isEmpty, "\(tinyproxy.log)")

      // The proxy's own CA, for the proxy only: the target is still checked against the test CA.
      let trusting = ProxyTunnelTests.channel(
        port: server.port, proxy: .url(front.url()), fixtures: fixtures
      ) { options in
        options.proxyTrustRoots = .pemFile(fixtures.otherCACertificate)
      }
      defer { trusting.close() }
      try await ProxyTunnelTests.emptyCall(trusting)
      #expect(try await tinyproxy.waitForRequests(1).count == 1)
    }
  }

  @Test(
    "Basic authentication over an https:// proxy: the right password opens the tunnel, a wrong one is refused; the log has neither"
  )
  func basicAuthentication() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await TLSInteropTests.server.value
    let password = "tls-pr0xy-SECRET"
    try await withTLSProxy(basicAuth: ("alice", password)) { front, tinyproxy in
      let good = ProxyTunnelTests.channel(
        port: server.port, proxy: .url(front.url(user: "alice", password: password)),
        fixtures: fixtures)
      defer { good.close() }
      try await ProxyTunnelTests.emptyCall(good)

      let wrong = ProxyTunnelTests.channel(
        port: server.port, proxy: .url(front.url(user: "alice", password: "wrong")),
        fixtures: fixtures)
      defer { wrong.close() }
      do {
        try await ProxyTunnelTests.emptyCall(wrong)
        Issue.record("the proxy let a wrong password through")
      } catch let error as RPCError {
        #expect(error.code == .unavailable)
        // tinyproxy answers a wrong password with 401.
        #expect(
          error.message.contains(
            "the proxy \(front.url(user: "alice", password: "***")) did not open a tunnel to "
              + "127.0.0.1:\(server.port): it refused CONNECT 127.0.0.1:\(server.port): "
              + "401 Unauthorized"), "\(error.message)")
        #expect(!error.message.contains("wrong"))
      }
      try await tinyproxy.waitForRequests(2)
      let log = tinyproxy.log
      for secret in [password, "YWxpY2U6", "/grpc.testing", "EmptyCall"] {
        #expect(!log.contains(secret), "tinyproxy's log has \(secret):\n\(log)")
      }
    }
  }
}
