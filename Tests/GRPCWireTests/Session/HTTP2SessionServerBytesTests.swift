import GRPCTestingProtos
import Testing

@testable import GRPCWire

/// ``HTTP2Session`` in the server role, byte by byte: raw frames written to a ``GRPCServer``
/// on loopback, the frames it sends back checked against what RFC 9113 and the gRPC wire
/// format make of our settings and of one call (header blocks decoded with nghttp2's HPACK
/// inflater, everything else compared as bytes).
@Suite("HTTP2Session, server role: frames in, frames out", .timeLimit(.minutes(1)))
struct HTTP2SessionServerBytesTests {
  /// A server with the handlers `register` gives it — by default ``answerAbc(_:)`` — running
  /// `body` with its port.
  static func withServer(
    registering register: (GRPCServer) -> Void = answerAbc, _ body: (Int) async throws -> Void
  ) async throws {
    let server = GRPCServer()
    register(server)
    let port = try await server.start()
    do {
      try await body(port)
    } catch {
      await server.shutdown(gracePeriod: .seconds(1))
      throw error
    }
    await server.shutdown(gracePeriod: .seconds(1))
  }

  /// UnaryCall answers a payload of "abc" to any request, on the loop thread: no task, so the
  /// answer does not wait for a thread of the cooperative pool, which other suites running
  /// alongside may hold.
  static func answerAbc(_ server: GRPCServer) {
    server.registerOnLoop(unary: GRPCTesting.TestService.unaryCall) { _, _ in
      var response = GRPCTesting.SimpleResponse()
      var payload = GRPCTesting.Payload()
      payload.body = Array("abc".utf8)
      response.payload = payload
      return response
    }
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
  static let unaryRequest = requestHeaders(on: 1) + requestBody(on: 1)

  /// A UnaryCall request's HEADERS on `stream` (`extra` fields after the usual ones), its
  /// body still open.
  static func requestHeaders(
    on stream: UInt32, method: String = "UnaryCall", dropping dropped: String = "",
    extra: [(String, String)] = []
  ) -> [UInt8] {
    let fields = [
      (":method", "POST"), (":scheme", "http"), (":path", "/grpc.testing.TestService/\(method)"),
      (":authority", "localhost"), ("content-type", "application/grpc"), ("te", "trailers"),
    ].filter { $0.0 != dropped }
    return RawHTTP2.frame(type: 0x1, flags: 0x4, stream: stream, RawHTTP2.headerBlock(fields + extra))
  }

  /// One DATA with END_STREAM on `stream` carrying an empty SimpleRequest.
  static func requestBody(on stream: UInt32) -> [UInt8] {
    RawHTTP2.frame(type: 0x0, flags: 0x1, stream: stream, [0x00, 0x00, 0x00, 0x00, 0x00])
  }

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

  /// Checks the server's answer to ``unaryRequest`` on `stream`: response HEADERS, one DATA with the
  /// 5-byte prefix and the message, trailers with END_STREAM.
  static func checkUnaryAnswer(
    _ frames: [RawFrame], on stream: UInt32 = 1, hpack: HPACKReader = HPACKReader()
  ) throws {
    let onStream = frames.filter { $0.stream == stream }
    try #require(onStream.count == 3, "stream \(stream)'s frames: \(onStream)")
    let (headers, data, trailers) = (onStream[0], onStream[1], onStream[2])
    #expect(Array(headers.bytes[3..<9]) == [0x01, 0x04, 0x00, 0x00, 0x00, UInt8(stream)])  // HEADERS, END_HEADERS
    let headerFields = try #require(hpack.fields(of: headers))
    #expect(headerFields.first?.name == ":status" && headerFields.first?.value == "200")
    #expect(headerFields.contains { $0.name == "content-type" && $0.value == "application/grpc" })
    // SimpleResponse{payload: Payload{body: "abc"}}: field 1 (length 5) holding field 2 (length 3).
    #expect(
      data.bytes == [0x00, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x00, 0x00, UInt8(stream)]
        + [0x00, 0x00, 0x00, 0x00, 0x07, 0x0A, 0x05, 0x12, 0x03, 0x61, 0x62, 0x63])
    #expect(Array(trailers.bytes[3..<9]) == [0x01, 0x05, 0x00, 0x00, 0x00, UInt8(stream)])  // END_STREAM | END_HEADERS
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

  /// The call's deadline (its `grpc-timeout`) is its stream core's timer: when it passes
  /// before the request has ended, the call is answered at once, trailers-only.
  @Test("a request whose grpc-timeout passes before its body ends: trailers-only, status 4")
  func deadlineTrailersOnly() async throws {
    try await Self.withServer { port in
      let socket = try RawSocket(port: port)
      socket.send(RawHTTP2.preface + Self.requestHeaders(on: 1, extra: [("grpc-timeout", "50m")]))
      let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
        frames.contains { $0.stream == 1 && $0.type == 0x1 }
      }
      let answer = try #require(
        frames.first { $0.stream == 1 && $0.type == 0x1 }, "frames: \(frames)")
      // HEADERS, END_STREAM | END_HEADERS: the status, with no body before it.
      #expect(Array(answer.bytes[3..<9]) == [0x01, 0x05, 0x00, 0x00, 0x00, 0x01])
      let fields = try #require(HPACKReader().fields(of: answer))
      #expect(fields.first?.name == ":status" && fields.first?.value == "200")
      #expect(fields.contains { $0.name == "grpc-status" && $0.value == "4" }, "\(fields)")
    }
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

  /// Requests nghttp2 rejects (RFC 9113 8.2.1, 8.3.1): a field name with upper case (found
  /// mid-block), and no :path (found at the block's end).
  enum BadRequest: String, CaseIterable, Sendable {
    case upperCaseName = "an upper-case field name"
    case missingPath = "no :path"

    /// Its HEADERS on `stream`.
    func headers(on stream: UInt32) -> [UInt8] {
      switch self {
      case .upperCaseName: requestHeaders(on: stream, extra: [("Trip-Id", "7")])
      case .missingPath: requestHeaders(on: stream, dropping: ":path")
      }
    }
  }

  /// nghttp2 resets a rejected request's stream and never reports its header block's end.
  /// When the session held its events until that block ended, the body of the request before
  /// it, in the same read, waited too: that call was answered only when another request's
  /// headers arrived, or never.
  @Test("a rejected request is reset; the request around it in the same read and the next one are answered", arguments: BadRequest.allCases)
  func badRequestBetweenGoodOnes(_ bad: BadRequest) async throws {
    try await Self.withServer { port in
      let socket = try RawSocket(port: port)
      socket.send(
        RawHTTP2.preface + Self.requestHeaders(on: 1) + bad.headers(on: 3) + Self.requestBody(on: 1))
      let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
        frames.contains { $0.stream == 1 && $0.type == 0x1 && $0.flags & 0x1 != 0 }
      }
      // RST_STREAM on stream 3, PROTOCOL_ERROR.
      let reset = try #require(frames.first { $0.type == 0x3 }, "frames: \(frames)")
      #expect(
        reset.bytes == [0x00, 0x00, 0x04, 0x03, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01])
      // One decoder for the connection: the server's blocks may refer to its earlier ones.
      let hpack = HPACKReader()
      try Self.checkUnaryAnswer(frames, on: 1, hpack: hpack)
      socket.send(Self.requestHeaders(on: 5) + Self.requestBody(on: 5))
      let (_, next, _) = await socket.frames(timeout: .seconds(10)) { frames in
        frames.contains { $0.stream == 5 && $0.type == 0x1 && $0.flags & 0x1 != 0 }
      }
      try Self.checkUnaryAnswer(next, on: 5, hpack: hpack)
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
