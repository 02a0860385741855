import Testing

@testable import GRPCWire
import GRPCTestingProtos
import PeerSupport

/// The server's fault hooks: GOAWAY on live connections, and dropping a call's connection.
@Suite("Server GOAWAY and dropped connections", .timeLimit(.minutes(1)))
struct ServerHooksTests {
  typealias Service = GRPCTesting.TestService

  /// A server whose UnaryCall drops its connection when asked for a response of size 7.
  func makeServer() -> GRPCServer {
    let server = GRPCServer()
    server.register(unary: Service.unaryCall) { request, context in
      if request.responseSize == 7 { context.dropConnection() }
      try await Task.sleep(for: .milliseconds(100))
      return GRPCTesting.SimpleResponse()
    }
    server.register(unary: Service.emptyCall) { _, _ in GRPCTesting.Empty() }
    return server
  }

  @Test("goAway: calls in flight finish, new calls come on a new connection")
  func goAway() async throws {
    // The stream's responses after the second wait until the client has the GOAWAY (its
    // channel left READY), so the stream is certainly in flight when the GOAWAY arrives, not
    // already ended with its responses unread in the client's buffers.
    let goAwaySeen = Observed(false)
    let server = GRPCServer()
    server.register(serverStreaming: Service.streamingOutputCall) { request, writer, _ in
      for index in request.responseParameters.indices {
        if index == 2 {
          try await goAwaySeen.wait(for: "the client to see the GOAWAY", timeout: .seconds(10)) {
            $0
          }
        }
        try await writer.write(GRPCTesting.StreamingOutputCallResponse())
      }
    }
    server.register(unary: Service.emptyCall) { _, _ in GRPCTesting.Empty() }
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    let states = ConnectivityLog(channel)
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = Array(repeating: GRPCTesting.ResponseParameters(), count: 8)
    let received = try await channel.serverStreaming(Service.streamingOutputCall, request) {
      responses in
      var count = 0
      for try await _ in responses {
        count += 1
        guard count == 2 else { continue }
        let (ready, _) = try await states.wait(for: .ready)
        server.goAway()
        // Its only connection draining, the channel is IDLE (gRPC's connectivity semantics).
        try await states.wait(for: .idle, from: ready + 1)
        goAwaySeen.update { $0 = true }
      }
      return count
    }
    #expect(received == 8, "the in-flight stream was cut after \(received) responses")
    _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    let opened = await channel.connectionsOpened()
    #expect(opened == 2, "the call after GOAWAY should use a second connection")
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("goAway, idle connection: the notice, the GOAWAY naming the last stream, then close")
  func goAwayIdleConnection() async throws {
    let server = makeServer()
    let port = try await server.start()
    let socket = try RawSocket(port: port)
    socket.send(RawHTTP2.preface + RawHTTP2.ping(0x5A))
    var received: [UInt8] = []
    // The PING's ACK: the server runs the connection's session, and it is idle.
    let acknowledged = socket.read(into: &received, timeout: .seconds(10)) { frames in
      frames.contains { $0.type == 0x6 && $0.flags & 0x1 != 0 }
    }
    try #require(acknowledged == .satisfied, "no PING ACK within 10 s: \(acknowledged)")
    server.goAway()
    let outcome = socket.read(into: &received, timeout: .seconds(10))
    // RFC 9113 §6.8: a notice (2^31-1), then the last stream taken (none: 0). Closing after
    // the notice alone would leave a request sent meanwhile neither served nor refused.
    let lastStreams = RawHTTP2.frames(in: received).filter { $0.type == 0x7 }.map {
      $0.payload.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
    }
    #expect(outcome == .closed)
    #expect(lastStreams == [0x7FFF_FFFF, 0], "GOAWAYs before the close, by last stream")
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("dropConnection: the call sees an interrupted UNAVAILABLE; the next call reconnects")
  func dropConnection() async throws {
    let server = makeServer()
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    var request = GRPCTesting.SimpleRequest()
    request.responseSize = 7
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(Service.unaryCall, request)
    }
    #expect(error.code == .unavailable && error.isInterrupted, "\(error)")
    _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    await server.shutdown(gracePeriod: .seconds(1))
  }
}
