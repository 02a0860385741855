import GRPCTestingProtos
import Testing

@testable import GRPCWire

/// ``HTTP2Session`` in the server role, byte by byte: raw frames written to a ``GRPCServer``
/// on loopback, the frames it sends back checked against what RFC 9113 and the gRPC wire
/// format make of our settings and of one call (header blocks decoded with nghttp2's HPACK
/// inflater, everything else compared as bytes).
@Suite("HTTP2Session, server role: frames in, frames out", .timeLimit(.minutes(1)))
struct HTTP2SessionServerBytesTests {
  /// A server whose UnaryCall answers a payload of "abc" to any request, on its loop thread:
  /// no task, so the answer does not wait for a thread of the cooperative pool, which other
  /// suites running alongside may hold.
  static func withServer(_ body: (Int) async throws -> Void) async throws {
    let server = GRPCServer()
    server.registerOnLoop(unary: GRPCTesting.TestService.unaryCall) { _, _ in
      var response = GRPCTesting.SimpleResponse()
      var payload = GRPCTesting.Payload()
      payload.body = Array("abc".utf8)
      response.payload = payload
      return response
    }
    let port = try await server.start()
    do {
      try await body(port)
    } catch {
      await server.shutdown(gracePeriod: .seconds(1))
      throw error
    }
    await server.shutdown(gracePeriod: .seconds(1))
  }

  /// The server's SETTINGS for ``ServerOptions``' defaults: MAX_CONCURRENT_STREAMS 1,000 and
  /// INITIAL_WINDOW_SIZE 4 MiB (RFC 9113 6.5.2), then the connection window raised from
  /// 65,535 to 16 MiB by a WINDOW_UPDATE of 16,711,681 on stream 0.
  static let serverSettings: [UInt8] =
    [0x00, 0x00, 0x0C, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00]
    + [0x00, 0x03, 0x00, 0x00, 0x03, 0xE8] + [0x00, 0x04, 0x00, 0x40, 0x00, 0x00]
  static let connectionWindowUpdate: [UInt8] =
    [0x00, 0x00, 0x04, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0x00, 0x01]
  static let settingsAck: [UInt8] = [0x00, 0x00, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00]

  /// A UnaryCall request on stream 1: HEADERS, then one DATA with END_STREAM carrying an
  /// empty SimpleRequest.
  static let unaryRequest =
    RawHTTP2.frame(
      type: 0x1, flags: 0x4, stream: 1,
      RawHTTP2.headerBlock([
        (":method", "POST"), (":scheme", "http"), (":path", "/grpc.testing.TestService/UnaryCall"),
        (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers"),
      ]))
    + RawHTTP2.frame(type: 0x0, flags: 0x1, stream: 1, [0x00, 0x00, 0x00, 0x00, 0x00])

  @Test("the preface is answered with SETTINGS and a connection WINDOW_UPDATE, then ours is ACKed")
  func handshake() async throws {
    try await Self.withServer { port in
      let socket = try RawSocket(port: port)
      socket.send(RawHTTP2.preface)
      let (_, frames, closed) = await socket.frames(timeout: .seconds(10)) { $0.count >= 3 }
      #expect(!closed)
      try #require(frames.count == 3, "frames: \(frames)")
      #expect(frames[0].bytes == Self.serverSettings)
      #expect(frames[1].bytes == Self.connectionWindowUpdate)
      #expect(frames[2].bytes == Self.settingsAck)
    }
  }

  /// Checks the server's answer to ``unaryRequest``: response HEADERS, one DATA with the
  /// 5-byte prefix and the message, trailers with END_STREAM.
  static func checkUnaryAnswer(_ frames: [RawFrame]) throws {
    let hpack = HPACKReader()
    let onStream1 = frames.filter { $0.stream == 1 }
    try #require(onStream1.count == 3, "stream 1's frames: \(onStream1)")
    let (headers, data, trailers) = (onStream1[0], onStream1[1], onStream1[2])
    #expect(Array(headers.bytes[3..<9]) == [0x01, 0x04, 0x00, 0x00, 0x00, 0x01])  // HEADERS, END_HEADERS
    let headerFields = try #require(hpack.fields(of: headers))
    #expect(headerFields.first?.name == ":status" && headerFields.first?.value == "200")
    #expect(headerFields.contains { $0.name == "content-type" && $0.value == "application/grpc" })
    // SimpleResponse{payload: Payload{body: "abc"}}: field 1 (length 5) holding field 2 (length 3).
    #expect(
      data.bytes == [0x00, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01]
        + [0x00, 0x00, 0x00, 0x00, 0x07, 0x0A, 0x05, 0x12, 0x03, 0x61, 0x62, 0x63])
    #expect(Array(trailers.bytes[3..<9]) == [0x01, 0x05, 0x00, 0x00, 0x00, 0x01])  // END_STREAM | END_HEADERS
    let trailerFields = try #require(hpack.fields(of: trailers))
    #expect(trailerFields.contains { $0.name == "grpc-status" && $0.value == "0" })
    #expect(!trailerFields.contains { $0.name.hasPrefix(":") })
  }

  /// ``unaryRequest`` after the preface, written whole or one byte per write; the answer
  /// checked by ``checkUnaryAnswer(_:)``.
  static func unaryCall(bytewise: Bool) async throws {
    try await withServer { port in
      let socket = try RawSocket(port: port)
      let request = RawHTTP2.preface + unaryRequest
      if bytewise { socket.sendBytewise(request) } else { socket.send(request) }
      let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
        frames.contains { $0.stream == 1 && $0.type == 0x1 && $0.flags & 0x1 != 0 }
      }
      try checkUnaryAnswer(frames)
    }
  }

  @Test("a unary call written whole is answered with HEADERS, one DATA and trailers on its stream")
  func unaryWhole() async throws {
    try await Self.unaryCall(bytewise: false)
  }

  @Test("the same call written one byte per write gets the same answer")
  func unaryBytewise() async throws {
    try await Self.unaryCall(bytewise: true)
  }

  @Test("a PING is answered with a PING ACK carrying its 8 opaque bytes")
  func ping() async throws {
    try await Self.withServer { port in
      let socket = try RawSocket(port: port)
      let opaque: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
      socket.send(RawHTTP2.preface + RawHTTP2.frame(type: 0x6, stream: 0, opaque))
      let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
        frames.contains { $0.type == 0x6 }
      }
      let ack = try #require(frames.first { $0.type == 0x6 })
      #expect(ack.bytes == [0x00, 0x00, 0x08, 0x06, 0x01, 0x00, 0x00, 0x00, 0x00] + opaque)
    }
  }

  @Test("a request with an upper-case header name is reset: RST_STREAM PROTOCOL_ERROR on its stream")
  func resetOnBadHeader() async throws {
    try await Self.withServer { port in
      let socket = try RawSocket(port: port)
      let headers = RawHTTP2.headerBlock([
        (":method", "POST"), (":scheme", "http"), (":path", "/grpc.testing.TestService/UnaryCall"),
        (":authority", "localhost"), ("content-type", "application/grpc"), ("Bad", "1"),
      ])
      socket.send(RawHTTP2.preface + RawHTTP2.frame(type: 0x1, flags: 0x5, stream: 1, headers))
      let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
        frames.contains { $0.type == 0x3 }
      }
      let reset = try #require(frames.first { $0.type == 0x3 }, "frames: \(frames)")
      #expect(
        reset.bytes == [0x00, 0x00, 0x04, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01])
    }
  }

  @Test("DATA on stream 0 ends the connection: GOAWAY PROTOCOL_ERROR, last stream 0")
  func goAwayOnDataOnStreamZero() async throws {
    try await Self.withServer { port in
      let socket = try RawSocket(port: port)
      socket.send(RawHTTP2.preface + RawHTTP2.frame(type: 0x0, stream: 0, [0x00]))
      let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
        frames.contains { $0.type == 0x7 }
      }
      let goAway = try #require(frames.first { $0.type == 0x7 }, "frames: \(frames)")
      // Header: type 7, no flags, stream 0; payload: last stream 0, PROTOCOL_ERROR, debug text.
      #expect(Array(goAway.bytes[3..<9]) == [0x07, 0x00, 0x00, 0x00, 0x00, 0x00])
      #expect(Array(goAway.payload.prefix(8)) == [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01])
      #expect(await offThePool { socket.readUntilClosed(timeout: .seconds(10)) } != .stillOpen)
    }
  }
}
