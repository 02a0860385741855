import PeerSupport
import Testing

@testable import GRPCWire

/// The service config's `maxRequestMessageBytes` (and the call's own `maxSendMessageSize`) on
/// calls to grpcio (Tests/Python/retry_server.py, raw bytes): a larger request fails the call
/// with RESOURCE_EXHAUSTED before it is sent.
@Suite("Request size limits against grpcio", .timeLimit(.minutes(2)))
struct RequestLimitTests {
  static let config = #"{"methodConfig": [{"name": [{}], "maxRequestMessageBytes": 16}]}"#

  static func channel(port: Int) throws -> GRPCChannel {
    var options = ChannelOptions()
    options.serviceConfig = try ServiceConfig(json: config)
    return GRPCChannel(host: "127.0.0.1", port: port, options: options)
  }

  static func unary(
    _ channel: GRPCChannel, _ id: String, bytes: Int, ownLimit: Int? = nil
  ) async throws -> [UInt8] {
    var metadata = Metadata()
    metadata.add("x-retry-call", id)
    var options = CallOptions(timeout: .seconds(20), metadata: metadata)
    options.maxSendMessageSize = ownLimit
    return try await channel.unary(
      path: "/fleet.test.Retry/Unary", request: [UInt8](repeating: 7, count: bytes),
      serializer: RawBytesSerializer(), deserializer: RawBytesDeserializer(), options: options
    ).message
  }

  @Test("a unary request over maxRequestMessageBytes fails RESOURCE_EXHAUSTED unsent; one at the limit, or under the call's own larger limit, goes")
  func unaryLimit() async throws {
    try await withPeerServer("retry_server.py") { server in
      let channel = try Self.channel(port: server.port)
      defer { channel.close() }
      await #expect {
        try await Self.unary(channel, "too-large", bytes: 17)
      } throws: { error in
        let error = error as? RPCError
        return error?.code == .resourceExhausted
          && error?.message == "a request message of 17 bytes is over the limit of 16 bytes"
      }
      #expect(try await Self.unary(channel, "at-limit", bytes: 16).count == 16)
      #expect(try await Self.unary(channel, "own-limit", bytes: 64, ownLimit: 1024).count == 64)
      _ = try await server.waitForEvent("attempt") { $0["call"] == "own-limit" }
      #expect(!server.events.contains { $0["call"] == "too-large" }, "\(server.events)")
    }
  }

  @Test("a client-streaming write over the limit throws RESOURCE_EXHAUSTED and ends the call; the servicer never gets that message")
  func streamingLimit() async throws {
    try await withPeerServer("retry_server.py") { server in
      let channel = try Self.channel(port: server.port)
      defer { channel.close() }
      var metadata = Metadata()
      metadata.add("x-retry-call", "collect")
      await #expect {
        try await channel.clientStreaming(
          path: "/fleet.test.Retry/Collect", serializer: RawBytesSerializer(),
          deserializer: RawBytesDeserializer(),
          options: CallOptions(timeout: .seconds(20), metadata: metadata)
        ) { writer in
          try await writer.write([UInt8](repeating: 1, count: 8))
          // The call has reached the servicer: its end is then something the servicer sees.
          _ = try await server.waitForEvent("attempt") { $0["call"] == "collect" }
          try await writer.write([UInt8](repeating: 2, count: 32))
        }
      } throws: { error in
        (error as? RPCError)?.code == .resourceExhausted
      }
      let ended = try await server.waitForLine("the Collect call's end") { line in
        guard let event = PeerEvent(line), event["call"] == "collect" else { return false }
        return event.kind != "attempt"
      }
      // grpcio ends the request iterator at the reset (the servicer does not always see the
      // cancellation); what it received is the first message only.
      let event = try #require(PeerEvent(ended))
      #expect(event.kind == "cancelled" || event["sizes"] == "8", "\(server.events)")
    }
  }
}
