import Foundation
import GRPCTestingProtos
import PeerSupport
import Testing

@testable import GRPCWire

/// Proxy authentication against Debian's squid, started on loopback with Basic authentication
/// by its own `basic_ncsa_auth`: squid answers a wrong password with 407 (tinyproxy, in
/// ``ProxyTunnelTests``, says 401), and its access log is squid's native one.
@Suite("Proxy authentication through squid", .timeLimit(.minutes(3)))
struct SquidAuthenticationTests {
  @Test(
    "a wrong proxy password is UNAVAILABLE with squid's 407 in the message; the right one tunnels; squid logs only CONNECT host:port"
  )
  func wrongPasswordIs407() async throws {
    let fixtures = try await TLSFixtures.shared
    let server = try await TLSInteropTests.server.value
    let password = "sq-SECRET-pass"
    let wrongPassword = "wr0ng-SECRET"
    let target = "127.0.0.1:\(server.port)"
    try await withSquidProxy(user: "alice", password: password) { proxy in
      let good = ProxyTunnelTests.channel(
        port: server.port, proxy: .url(proxy.url(user: "alice", password: password)),
        fixtures: fixtures)
      var metadata = Metadata()
      metadata.add("authorization", "Bearer tok-SECRET-4711")
      _ = try await good.unary(
        GRPCTesting.TestService.emptyCall, GRPCTesting.Empty(),
        options: CallOptions(timeout: .seconds(30), metadata: metadata))
      // squid logs a tunnel when it closes.
      good.close()

      let wrong = ProxyTunnelTests.channel(
        port: server.port, proxy: .url(proxy.url(user: "alice", password: wrongPassword)),
        fixtures: fixtures)
      defer { wrong.close() }
      do {
        try await ProxyTunnelTests.emptyCall(wrong)
        Issue.record("squid let a wrong password through")
      } catch let error as RPCError {
        #expect(error.code == .unavailable, "\(error)")
        let shown = proxy.url(user: "alice", password: "***")
        #expect(
          error.message.contains(
            "the proxy \(shown) did not open a tunnel to \(target): it refused "
              + "CONNECT \(target): 407 Proxy Authentication Required"), "\(error.message)")
        #expect(!error.message.contains(wrongPassword), "\(error.message)")
      }

      // The access log: the tunnel (200) and the refusals (407, one per connection attempt
      // the channel made meanwhile), each `CONNECT host:port` — no path, no token, no password.
      // The tunnel's line comes when squid sees it close, perhaps after a refusal's.
      try await proxy.process.waitUntil("squid to log the tunnel and a refusal") {
        let requests = proxy.requests
        return requests.contains("CONNECT \(target) 200")
          && requests.contains("CONNECT \(target) 407")
      }
      let requests = proxy.requests
      #expect(requests.filter { $0 == "CONNECT \(target) 200" }.count == 1, "\(requests)")
      #expect(
        requests.allSatisfy { $0 == "CONNECT \(target) 200" || $0 == "CONNECT \(target) 407" },
        "\(proxy.accessLog)")
      let logs = proxy.accessLog + "\n" + proxy.process.lines.joined(separator: "\n")
      let secrets = [
        "tok-SECRET", password, wrongPassword, "/grpc.testing", "EmptyCall", "YWxpY2U6",
      ]
      for secret in secrets {
        #expect(!logs.contains(secret), "squid's logs have \(secret):\n\(logs)")
      }
    }
  }
}
