import FleetProtos
import Testing

@testable import GRPCWire

/// A client that sends DATA frames too small to carry anything makes the server work per
/// frame for nothing: past ``ServerOptions/maxTinyFramesPerStream`` the connection ends.
@Suite("Server: tiny DATA frames", .timeLimit(.minutes(1)))
struct TinyFramesTests {
  /// One HTTP/2 frame: 9-byte header, then `payload`.
  static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8] = []) -> [UInt8] {
    let length = payload.count
    return [
      UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags,
      UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF),
    ] + payload
  }

  /// An HPACK header block of literal fields, not indexed (RFC 7541 6.2.2), short strings.
  static func headerBlock(_ fields: [(String, String)]) -> [UInt8] {
    var block: [UInt8] = []
    for (name, value) in fields {
      block.append(0x00)
      block.append(UInt8(name.utf8.count))
      block.append(contentsOf: name.utf8)
      block.append(UInt8(value.utf8.count))
      block.append(contentsOf: value.utf8)
    }
    return block
  }

  /// The connection start and a request for `path` on stream 1, its body still open.
  static func opening(path: String) -> [UInt8] {
    let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    let headers = headerBlock([
      (":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"),
      ("content-type", "application/grpc"), ("te", "trailers"),
    ])
    return preface + frame(type: 0x4, stream: 0) + frame(type: 0x1, flags: 0x4, stream: 1, headers)
  }

  /// The error code of the first GOAWAY in `bytes` (the frames a server sent).
  static func goAwayCode(in bytes: [UInt8]) -> UInt32? {
    var offset = 0
    while offset + 9 <= bytes.count {
      let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
      let type = bytes[offset + 3]
      let payload = offset + 9
      if type == 0x7, payload + 8 <= bytes.count {
        return bytes[(payload + 4)..<(payload + 8)].reduce(0) { $0 << 8 | UInt32($1) }
      }
      offset = payload + length
    }
    return nil
  }

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
    var attack = Self.opening(path: "/grpc.testing.TestService/StreamingInputCall")
    for _ in 0...100 { attack += Self.frame(type: 0x0, stream: 1) }
    socket.send(attack)
    let (outcome, received) = socket.readAllUntilClosed(timeout: .seconds(5))
    #expect(outcome != .stillOpen, "the connection stayed open")
    #expect(Self.goAwayCode(in: received) == HTTP2ErrorCode.enhanceYourCalm)
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
    var attack = Self.opening(path: "/grpc.testing.TestService/StreamingInputCall")
    for _ in 0..<100 { attack += Self.frame(type: 0x0, stream: 1) }
    attack += Self.frame(type: 0x0, flags: 0x1, stream: 1)  // END_STREAM
    socket.send(attack)
    let (_, received) = socket.readAllUntilClosed(timeout: .milliseconds(500))
    #expect(Self.goAwayCode(in: received) == nil, "the server sent GOAWAY below the cap")
    // The response's HEADERS and trailers came back on stream 1.
    #expect(received.count > 9 * 3, "no response: \(received.count) bytes")
    await server.shutdown(gracePeriod: .seconds(1))
  }
}
