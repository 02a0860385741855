import Testing

@testable import GRPCWire
import GRPCTestingProtos

/// A client that sends DATA frames too small to carry anything makes the server work per
/// frame for nothing: past ``ServerOptions/maxTinyFramesPerStream`` the connection ends.
@Suite("Server: tiny DATA frames", .timeLimit(.minutes(1)))
struct TinyFramesTests {
  static func makeServer(_ options: ServerOptions) -> GRPCServer {
    let server = GRPCServer(options: options)
    server.register(clientStreaming: GRPCTesting.TestService.streamingInputCall) { requests, _ in
      for try await _ in requests {}
      return GRPCTesting.StreamingInputCallResponse()
    }
    server.register(unary: GRPCTesting.TestService.emptyCall) { _, _ in GRPCTesting.Empty() }
    return server
  }

  @Test("one empty DATA frame past the cap ends the connection with GOAWAY ENHANCE_YOUR_CALM; the server serves on")
  func emptyFrames() async throws {
    var options = ServerOptions()
    options.maxTinyFramesPerStream = 100
    let server = Self.makeServer(options)
    let port = try await server.start()
    let socket = try RawSocket(port: port)
    var attack = RawHTTP2.opening(path: "/grpc.testing.TestService/StreamingInputCall")
    for _ in 0...100 { attack += RawHTTP2.frame(type: 0x0, stream: 1) }
    socket.send(attack)
    let (outcome, received) = socket.readAllUntilClosed(timeout: .seconds(5))
    #expect(outcome != .stillOpen, "the connection stayed open")
    #expect(RawHTTP2.goAwayCode(in: received) == HTTP2ErrorCode.enhanceYourCalm)
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    _ = try await channel.unary(GRPCTesting.TestService.emptyCall, GRPCTesting.Empty())
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("up to the cap, tiny frames are allowed: the call completes")
  func atTheCap() async throws {
    var options = ServerOptions()
    options.maxTinyFramesPerStream = 100
    let server = Self.makeServer(options)
    let port = try await server.start()
    let socket = try RawSocket(port: port)
    var attack = RawHTTP2.opening(path: "/grpc.testing.TestService/StreamingInputCall")
    for _ in 0..<100 { attack += RawHTTP2.frame(type: 0x0, stream: 1) }
    attack += RawHTTP2.frame(type: 0x0, flags: 0x1, stream: 1)  // END_STREAM
    socket.send(attack)
    let (_, received) = socket.readAllUntilClosed(timeout: .milliseconds(500))
    #expect(RawHTTP2.goAwayCode(in: received) == nil, "the server sent GOAWAY below the cap")
    // The response's HEADERS and trailers came back on stream 1.
    #expect(received.count > 9 * 3, "no response: \(received.count) bytes")
    await server.shutdown(gracePeriod: .seconds(1))
  }
}
