import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

/// The generated typed client (`GRPCTesting.TestService.Client`, grpc-wire-gen) against
/// grpcio's interop server (Tests/Python/interop_server.py): one call of every kind, each
/// answer checked, and an RPC grpcio does not serve ending with UNIMPLEMENTED. The server
/// side of the generated stubs (`ServiceProtocol`, `GRPCServer.register(_:)`) is what
/// interop-server serves TestService with, checked by grpcio's client in ServerInteropTests.
@Suite("The generated TestService client against grpcio's server", .timeLimit(.minutes(2)))
struct GeneratedClientTests {
  typealias Client = GRPCTesting.TestService.Client

  func withClient(_ body: (Client) async throws -> Void) async throws {
    try await withPeerServer("interop_server.py") { server in
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port)
      defer { channel.close() }
      try await body(Client(channel: channel))
    }
  }

  static func zeros(_ count: Int) -> GRPCTesting.Payload {
    var payload = GRPCTesting.Payload()
    payload.body = [UInt8](repeating: 0, count: count)
    return payload
  }

  static func output(_ sizes: [Int], payload: Int = 0) -> GRPCTesting.StreamingOutputCallRequest {
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = sizes.map {
      var parameters = GRPCTesting.ResponseParameters()
      parameters.size = Int32($0)
      return parameters
    }
    if payload > 0 { request.payload = zeros(payload) }
    return request
  }

  @Test("unary: emptyCall and unaryCall answer, with the payload size asked for")
  func unary() async throws {
    try await withClient { client in
      let empty = try await client.emptyCall(GRPCTesting.Empty())
      #expect(empty.message == GRPCTesting.Empty())
      var request = GRPCTesting.SimpleRequest()
      request.responseSize = 314_159
      request.payload = Self.zeros(271_828)
      let response = try await client.unaryCall(
        request, options: CallOptions(timeout: .seconds(30)))
      #expect(response.message.payload?.body == [UInt8](repeating: 0, count: 314_159))
    }
  }

  @Test("server streaming: streamingOutputCall returns one response per size, in order")
  func serverStreaming() async throws {
    try await withClient { client in
      let sizes = [31_415, 9, 2_653, 58_979]
      let received = try await client.streamingOutputCall(Self.output(sizes)) { responses in
        var sizes: [Int] = []
        for try await response in responses { sizes.append(response.payload?.body.count ?? -1) }
        return sizes
      }
      #expect(received == sizes)
    }
  }

  @Test("client streaming: streamingInputCall sums the payloads it was sent")
  func clientStreaming() async throws {
    try await withClient { client in
      let response = try await client.streamingInputCall { writer in
        for size in [27_182, 8, 1_828, 45_904] {
          var request = GRPCTesting.StreamingInputCallRequest()
          request.payload = Self.zeros(size)
          try await writer.write(request)
        }
      }
      #expect(response.message.aggregatedPayloadSize == 74_922)
    }
  }

  @Test("bidirectional: fullDuplexCall answers each request before the next is sent")
  func bidirectional() async throws {
    try await withClient { client in
      let sizes = [(31_415, 27_182), (9, 8), (2_653, 1_828), (58_979, 45_904)]
      let received = try await client.fullDuplexCall { writer, responses in
        var iterator = responses.makeAsyncIterator()
        var received: [Int] = []
        for (responseSize, payloadSize) in sizes {
          try await writer.write(Self.output([responseSize], payload: payloadSize))
          received.append(try await iterator.next()?.payload?.body.count ?? -1)
        }
        writer.finish()
        #expect(try await iterator.next() == nil, "a response after the requests were finished")
        return received
      }
      #expect(received == sizes.map(\.0))
    }
  }

  @Test("an RPC grpcio does not serve (unimplementedCall) ends with UNIMPLEMENTED")
  func unimplemented() async throws {
    try await withClient { client in
      let error = try await #require(throws: RPCError.self) {
        _ = try await client.unimplementedCall(GRPCTesting.Empty())
      }
      #expect(error.code == .unimplemented, "\(error)")
    }
  }
}
