import GRPCTestingProtos
import Testing

@testable import GRPCWire

/// The parts of a response a server's stream submits through its session (its headers with
/// the body after them, or alone; its trailers) and the connection it drops through it, as
/// the frames on the wire show them.
extension HTTP2SessionServerBytesTests {
  typealias Service = GRPCTesting.TestService

  /// The frames stream 1 gets for `request` (sent after the preface), up to the one that
  /// ends it.
  static func answer(to request: [UInt8], port: Int) async throws -> [RawFrame] {
    let socket = try RawSocket(port: port)
    socket.send(RawHTTP2.preface + request)
    let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.stream == 1 && $0.type == 0x1 && $0.flags & 0x1 != 0 }
    }
    return frames.filter { $0.stream == 1 }
  }

  /// A response message of `body` as the wire carries it: the 5-byte prefix (uncompressed),
  /// then StreamingOutputCallResponse{payload: Payload{body}}.
  static func framedPayload(_ body: UInt8) -> [UInt8] {
    [0x00, 0x00, 0x00, 0x00, 0x05, 0x0A, 0x03, 0x12, 0x01, body]
  }

  /// The bytes of every DATA frame of `frames`, in order.
  static func body(of frames: [RawFrame]) -> [UInt8] {
    frames.filter { $0.type == 0x0 }.flatMap(\.payload)
  }

  @Test("a handler's task writing two messages: HEADERS, its body as DATA, then trailers")
  func streamedResponse() async throws {
    try await Self.withServer(registering: { server in
      server.register(serverStreaming: Service.streamingOutputCall) { _, writer, _ in
        for body in Array("ab".utf8) {
          var response = GRPCTesting.StreamingOutputCallResponse()
          var payload = GRPCTesting.Payload()
          payload.body = [body]
          response.payload = payload
          try await writer.write(response)
        }
      }
    }) { port in
      let request =
        Self.requestHeaders(on: 1, method: "StreamingOutputCall") + Self.requestBody(on: 1)
      let frames = try await Self.answer(to: request, port: port)
      let hpack = HPACKReader()
      let headers = try #require(frames.first, "frames: \(frames)")
      // HEADERS, END_HEADERS only: the body follows.
      #expect(Array(headers.bytes[3..<5]) == [0x01, 0x04])
      let fields = try #require(hpack.fields(of: headers))
      #expect(fields.first?.name == ":status" && fields.first?.value == "200")
      #expect(!fields.contains { $0.name == "grpc-status" })
      #expect(Self.body(of: frames) == Self.framedPayload(0x61) + Self.framedPayload(0x62))
      let trailers = try #require(frames.last)
      #expect(Array(trailers.bytes[3..<5]) == [0x01, 0x05])
      let trailerFields = try #require(hpack.fields(of: trailers))
      #expect(trailerFields.contains { $0.name == "grpc-status" && $0.value == "0" })
    }
  }

  @Test("a client that accepts gzip and a handler that compresses: grpc-encoding gzip, flag 1")
  func compressedResponse() async throws {
    try await Self.withServer(registering: { server in
      server.registerOnLoop(unary: Service.unaryCall) { _, context in
        context.setCompressResponses(true)
        var response = GRPCTesting.SimpleResponse()
        var payload = GRPCTesting.Payload()
        payload.body = Array("abc".utf8)
        response.payload = payload
        return response
      }
    }) { port in
      let request =
        Self.requestHeaders(on: 1, extra: [("grpc-accept-encoding", "gzip")])
        + Self.requestBody(on: 1)
      let frames = try await Self.answer(to: request, port: port)
      let headers = try #require(frames.first, "frames: \(frames)")
      let fields = try #require(HPACKReader().fields(of: headers))
      #expect(fields.contains { $0.name == "grpc-encoding" && $0.value == "gzip" }, "\(fields)")
      let body = Self.body(of: frames)
      try #require(body.count > 5, "frames: \(frames)")
      #expect(body[0] == 1)
      let length = body[1..<5].reduce(0) { $0 << 8 | Int($1) }
      #expect(length == body.count - 5)
      let message = try Gzip.decompress(Array(body[5...]), limit: 1 << 10)
      #expect(message == [0x0A, 0x05, 0x12, 0x03, 0x61, 0x62, 0x63])
    }
  }

  @Test("a handler that fails before answering: trailers-only, its initial metadata included")
  func failedHandlerTrailersOnly() async throws {
    try await Self.withServer(registering: { server in
      server.registerOnLoop(unary: Service.unaryCall) { _, context in
        context.setInitialMetadata(["x-initial": "1"])
        context.setTrailingMetadata(["x-trailing": "2"])
        throw RPCError(code: .notFound, message: "no such thing")
      }
    }) { port in
      let frames = try await Self.answer(to: Self.unaryRequest, port: port)
      try #require(frames.count == 1, "frames: \(frames)")
      #expect(Array(frames[0].bytes[3..<5]) == [0x01, 0x05])
      let fields = try #require(HPACKReader().fields(of: frames[0]))
      #expect(fields.first?.name == ":status" && fields.first?.value == "200")
      #expect(fields.contains { $0.name == "grpc-status" && $0.value == "5" }, "\(fields)")
      #expect(fields.contains { $0.name == "x-initial" && $0.value == "1" })
      #expect(fields.contains { $0.name == "x-trailing" && $0.value == "2" })
      #expect(!fields.contains { $0.name == "grpc-accept-encoding" })
    }
  }

  @Test("a call to a method the server lacks: trailers-only UNIMPLEMENTED, saying what it accepts")
  func unknownMethodTrailersOnly() async throws {
    try await Self.withServer { port in
      let request = Self.requestHeaders(on: 1, method: "Missing") + Self.requestBody(on: 1)
      let frames = try await Self.answer(to: request, port: port)
      let answer = try #require(frames.first { $0.type == 0x1 }, "frames: \(frames)")
      #expect(Array(answer.bytes[3..<5]) == [0x01, 0x05])
      let fields = try #require(HPACKReader().fields(of: answer))
      #expect(fields.contains { $0.name == "grpc-status" && $0.value == "12" }, "\(fields)")
      #expect(fields.contains { $0.name == "grpc-accept-encoding" && $0.value == "identity,gzip" })
    }
  }

  @Test("a handler that drops its connection: the socket closes with no GOAWAY and no answer")
  func dropConnection() async throws {
    try await Self.withServer(registering: { server in
      server.registerOnLoop(unary: Service.unaryCall) { _, context in
        context.dropConnection()
        return GRPCTesting.SimpleResponse()
      }
    }) { port in
      let socket = try RawSocket(port: port)
      socket.send(RawHTTP2.preface + Self.unaryRequest)
      let (outcome, bytes) = await offThePool { socket.readAllUntilClosed(timeout: .seconds(10)) }
      #expect(outcome == .closed)
      let frames = RawHTTP2.frames(in: bytes)
      #expect(!frames.contains { $0.type == 0x7 }, "frames: \(frames)")
      #expect(!frames.contains { $0.stream == 1 }, "frames: \(frames)")
    }
  }
}
