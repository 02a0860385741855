import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

/// Bearer tokens go over plaintext only to loopback addresses unless the caller allows it.
///
/// The non-loopback address is 0.0.0.1: not loopback, and the kernel refuses to connect to it
/// (0.0.0.0/8 is "this network"), so no packet ever leaves the machine even if a check failed.
@Suite("Credentials over plaintext", .timeLimit(.minutes(1)))
struct CredentialsPolicyTests {
  func tokenOptions() -> CallOptions {
    var metadata = Metadata()
    metadata.add("authorization", "Bearer secret-token")
    return CallOptions(timeout: .seconds(5), metadata: metadata)
  }

  @Test("a bearer token to a non-loopback address over plaintext is refused before connecting")
  func refused() async throws {
    let channel = GRPCChannel(host: "0.0.0.1", port: 50051)
    defer { channel.close() }
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty(), options: tokenOptions())
    }
    #expect(error.code == .unauthenticated)
    #expect(error.message.contains("refusing to send credentials"), "\(error.message)")
    #expect(error.message.contains("0.0.0.1"), "\(error.message)")
    #expect(!error.message.contains("secret-token"), "the token leaked into the message")
    #expect(channel.connectivityState == .idle, "a connection was attempted")
  }

  @Test("with allowInsecureCredentials the call goes ahead (and fails only to connect)")
  func allowed() async throws {
    var options = ChannelOptions()
    options.allowInsecureCredentials = true
    options.backoff.minimumConnectTimeout = .seconds(2)
    let channel = GRPCChannel(host: "0.0.0.1", port: 50051, options: options)
    defer { channel.close() }
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty(), options: tokenOptions())
    }
    #expect(error.code == .unavailable, "\(error)")
    #expect(!error.message.contains("refusing to send credentials"))
  }

  @Test("a call without a token to that address is not refused by the policy")
  func noToken() async throws {
    var options = ChannelOptions()
    options.backoff.minimumConnectTimeout = .seconds(2)
    let channel = GRPCChannel(host: "0.0.0.1", port: 50051, options: options)
    defer { channel.close() }
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
    }
    #expect(error.code == .unavailable, "\(error)")
  }

  @Test("a bearer token to loopback over plaintext is sent", arguments: ["127.0.0.1", "localhost"])
  func loopback(host: String) async throws {
    try await withPeerServer("interop_server.py") { server in
      let channel = GRPCChannel(host: host, port: server.port)
      defer { channel.close() }
      let from = server.lines.count
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty(), options: tokenOptions())
      let request = try await server.waitForEvent("request", from: from)
      let sent = request.headers?.contains { $0.first == "authorization" } ?? false
      #expect(sent, "the server did not receive the authorization header")
    }
  }
}
