import Dispatch
import Foundation
import GRPCTestingProtos
import Testing

@testable import GRPCWire

/// ``HTTP2Session`` in the client role, byte by byte: a ``GRPCChannel`` calls a loopback socket
/// the test answers by hand with raw frames, and the frames the channel sends are checked
/// against what RFC 9113 and the gRPC wire format make of our settings and of one call (header
/// blocks decoded with nghttp2's HPACK inflater, everything else compared as bytes).
@Suite("HTTP2Session, client role: frames in, frames out", .timeLimit(.minutes(1)))
struct HTTP2SessionClientBytesTests {
  /// The client connection preface (RFC 9113 3.4), before its SETTINGS.
  static let prefaceMagic = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

  /// The client's SETTINGS for ``ChannelOptions``' defaults: ENABLE_PUSH 0, INITIAL_WINDOW_SIZE
  /// 4 MiB, MAX_HEADER_LIST_SIZE 64 KiB; then the connection window raised from 65,535 to
  /// 16 MiB by a WINDOW_UPDATE of 16,711,681 on stream 0.
  static let clientSettings: [UInt8] =
    [0x00, 0x00, 0x12, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00]
    + [0x00, 0x02, 0x00, 0x00, 0x00, 0x00] + [0x00, 0x04, 0x00, 0x40, 0x00, 0x00]
    + [0x00, 0x06, 0x00, 0x01, 0x00, 0x00]
  static let connectionWindowUpdate: [UInt8] =
    [0x00, 0x00, 0x04, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0x00, 0x01]
  static let settingsAck: [UInt8] = [0x00, 0x00, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00]

  // The calls run in tasks that prefer the channel's loop: they start there at once, not
  // when a thread of the cooperative pool (which other suites may hold) gets to them.

  /// A SimpleRequest whose payload is "xyz".
  static var request: GRPCTesting.SimpleRequest {
    var request = GRPCTesting.SimpleRequest()
    var payload = GRPCTesting.Payload()
    payload.body = Array("xyz".utf8)
    request.payload = payload
    return request
  }

  /// Reads the connection's start and answers it with our SETTINGS and the ACK of the
  /// client's; checks that SETTINGS and WINDOW_UPDATE came first (a client starts no stream
  /// before the server's SETTINGS).
  static func answerStart(_ socket: RawSocket) async throws {
    let (magic, start, closed) = await socket.frames(
      skipping: prefaceMagic.count, timeout: .seconds(10)
    ) {
      $0.count >= 2
    }
    #expect(!closed)
    #expect(magic == prefaceMagic)
    try #require(start.count == 2, "frames: \(start)")
    #expect(start[0].bytes == clientSettings)
    #expect(start[1].bytes == connectionWindowUpdate)
    socket.send(RawHTTP2.frame(type: 0x4, stream: 0) + settingsAck)
  }

  /// ``answerStart(_:)``, then reads the whole request of stream 1 (until END_STREAM), and
  /// checks it: the ACK of our SETTINGS, HEADERS and one DATA of stream 1.
  static func readRequest(_ socket: RawSocket, port: Int) async throws {
    try await answerStart(socket)
    let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.stream == 1 && $0.flags & 0x1 != 0 }
    }
    #expect(frames.filter { $0.stream == 0 }.map(\.bytes) == [settingsAck], "frames: \(frames)")
    let request = frames.filter { $0.stream == 1 }
    try #require(request.count == 2, "frames: \(frames)")
    let headers = request[0]
    #expect(Array(headers.bytes[3..<9]) == [0x01, 0x04, 0x00, 0x00, 0x00, 0x01])  // HEADERS, END_HEADERS
    let fields = try #require(HPACKReader().fields(of: headers))
    let pseudo = fields.prefix { $0.name.hasPrefix(":") }.map { "\($0.name) \($0.value)" }
    #expect(
      Set(pseudo) == [
        ":method POST", ":scheme http", ":path /grpc.testing.TestService/UnaryCall",
        ":authority 127.0.0.1:\(port)",
      ])
    #expect(fields.contains { $0.name == "content-type" && $0.value == "application/grpc" })
    #expect(fields.contains { $0.name == "te" && $0.value == "trailers" })
    // SimpleRequest{payload: Payload{body: "xyz"}} behind the 5-byte prefix, with END_STREAM:
    // field 3 (length 5) holding field 2 (length 3).
    #expect(
      request[1].bytes == [0x00, 0x00, 0x0C, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01]
        + [0x00, 0x00, 0x00, 0x00, 0x07, 0x1A, 0x05, 0x12, 0x03, 0x78, 0x79, 0x7A])
  }

  /// A server's whole answer on `stream`: HEADERS, DATA with SimpleResponse{payload:
  /// Payload{body: "abc"}}, trailers.
  static func answer(on stream: UInt32) -> [UInt8] {
    RawHTTP2.frame(
      type: 0x1, flags: 0x4, stream: stream,
      RawHTTP2.headerBlock([(":status", "200"), ("content-type", "application/grpc")]))
      + RawHTTP2.frame(
        type: 0x0, stream: stream,
        [0x00, 0x00, 0x00, 0x00, 0x07, 0x0A, 0x05, 0x12, 0x03, 0x61, 0x62, 0x63])
      + RawHTTP2.frame(
        type: 0x1, flags: 0x5, stream: stream, RawHTTP2.headerBlock([("grpc-status", "0")]))
  }

  static let answer = answer(on: 1)

  /// A unary call of ``request`` on `channel` (a channel to `listener`), started on its loop,
  /// and the server's end of its connection once the request has been read off it.
  static func startCall(on channel: GRPCChannel, _ listener: RawListener) async throws -> (
    call: Task<ClientResponse<GRPCTesting.SimpleResponse>, any Error>, socket: RawSocket
  ) {
    let call = Task(executorPreference: channel.eventLoop) {
      try await channel.unary(GRPCTesting.TestService.unaryCall, request)
    }
    let socket = try #require(
      await listener.accept(timeout: .seconds(10)), "the channel did not connect")
    try await readRequest(socket, port: listener.port)
    return (call, socket)
  }

  /// ``startCall(on:_:)`` on a fresh channel to a fresh listener; the caller closes the
  /// channel it returns.
  static func startCall() async throws -> (
    call: Task<ClientResponse<GRPCTesting.SimpleResponse>, any Error>, socket: RawSocket,
    channel: GRPCChannel
  ) {
    let listener = try RawListener()
    let channel = GRPCChannel(host: "127.0.0.1", port: listener.port)
    let (call, socket) = try await startCall(on: channel, listener)
    return (call, socket, channel)
  }

  /// One unary call answered with ``answer``, written whole or one byte per write; then the
  /// channel closes. Checks the request, the response, and the GOAWAY that ends the
  /// connection.
  static func unaryCall(bytewise: Bool) async throws {
    let listener = try RawListener()
    let channel = GRPCChannel(host: "127.0.0.1", port: listener.port)
    let (call, socket) = try await Self.startCall(on: channel, listener)
    if bytewise { socket.sendBytewise(answer) } else { socket.send(answer) }
    let response = try await call.value
    #expect(response.message.payload?.body == Array("abc".utf8))
    channel.close()
    let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.type == 0x7 }
    }
    // GOAWAY: no flags, stream 0; last stream 0 (a client accepts none), NO_ERROR.
    #expect(
      frames.last?.bytes
        == [0x00, 0x00, 0x08, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00]
        + [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], "frames: \(frames)")
  }

  @Test("a unary call: SETTINGS, WINDOW_UPDATE, HEADERS, DATA out; an answer written whole completes it; GOAWAY on close")
  func unaryWhole() async throws {
    try await Self.unaryCall(bytewise: false)
  }

  @Test("the same call answered one byte per write completes the same")
  func unaryBytewise() async throws {
    try await Self.unaryCall(bytewise: true)
  }

  /// A header block split across two reads, behind other frames in the first: the trailers'
  /// fields that arrive in the second read belong to the block begun in the first (when the
  /// first read's events were handed over with the block half-open, its fields were dropped:
  /// "the server's trailers have no grpc-status", 1-2 calls in 100,000 under fleet-load).
  @Test("trailers split across two reads, after a DATA frame in the first, complete the call")
  func trailersSplitAcrossReads() async throws {
    let (call, socket, channel) = try await Self.startCall()
    defer { channel.close() }
    // The answer up to the last byte of the trailers' header block, with a PING before that
    // block: its ACK says the channel has read the first part before the last byte is sent.
    let trailersLength = 9 + RawHTTP2.headerBlock([("grpc-status", "0")]).count
    let headBeforeTrailers = Array(Self.answer.dropLast(trailersLength))
    let trailers = Array(Self.answer.suffix(trailersLength))
    let ping = RawHTTP2.frame(type: 0x6, stream: 0, [1, 2, 3, 4, 5, 6, 7, 8])
    socket.send(headBeforeTrailers + ping + Array(trailers.dropLast()))
    let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.type == 0x6 && $0.flags & 0x1 != 0 }
    }
    try #require(frames.contains { $0.type == 0x6 }, "no PING ACK: \(frames)")
    socket.send([trailers.last!])
    let response = try await call.value
    #expect(response.message.payload?.body == Array("abc".utf8))
  }

  /// An answer larger than the loop's shared read buffer (64 KiB), all of it there when the
  /// loop reads: the loop reads the buffer full, hands the first part of the message over, and
  /// reads on into the same buffer within the same read budget. The message spans the reads,
  /// so the bytes of the first must have been kept before the next one wrote over them.
  @Test("a message larger than the loop's read buffer, there at once, arrives byte for byte")
  func messageAcrossReads() async throws {
    let (call, socket, channel) = try await Self.startCall()
    defer { channel.close() }
    let body = (0..<80_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
    var response = GRPCTesting.SimpleResponse()
    var payload = GRPCTesting.Payload()
    payload.body = body
    response.payload = payload
    let message = GRPCChannel.frame(response)
    var answer = RawHTTP2.frame(
      type: 0x1, flags: 0x4, stream: 1,
      RawHTTP2.headerBlock([(":status", "200"), ("content-type", "application/grpc")]))
    // DATA frames of at most 16,384 bytes, the default SETTINGS_MAX_FRAME_SIZE (RFC 9113 6.5.2).
    for start in stride(from: 0, to: message.count, by: 16_384) {
      answer += RawHTTP2.frame(
        type: 0x0, stream: 1, Array(message[start..<min(start + 16_384, message.count)]))
    }
    answer += RawHTTP2.frame(
      type: 0x1, flags: 0x5, stream: 1, RawHTTP2.headerBlock([("grpc-status", "0")]))
    // The loop is held while the answer is written, so that it finds all of it at once. The
    // send returns once the bytes are in our socket's send buffer, made large enough for them.
    var sendBuffer: Int32 = 1 << 20
    setsockopt(socket.fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
    let held = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    channel.eventLoop.execute {
      held.signal()
      _ = release.wait(timeout: .now() + 10)
    }
    #expect(await offThePool { held.wait(timeout: .now() + 10) } == .success)
    let written = answer
    await offThePool { socket.send(written) }
    release.signal()
    let answered = try await call.value
    #expect(answered.message.payload?.body.count == body.count)
    #expect(answered.message.payload?.body == body)
  }

  /// nghttp2 rejects a response header block with an upper-case field name (RFC 9113 8.2.1):
  /// it resets the stream and never reports the block's end. When the session held its
  /// events until the block ended, the stream's close waited with them: the call hung until
  /// its deadline (and every later event of the connection with it).
  @Test("response headers with an upper-case name fail the call with INTERNAL, not at its deadline; the next call on the connection completes")
  func upperCaseResponseHeader() async throws {
    let listener = try RawListener()
    let channel = GRPCChannel(host: "127.0.0.1", port: listener.port)
    defer { channel.close() }
    // The deadline bounds the wait: a call still open when it passes fails DEADLINE_EXCEEDED.
    let options = CallOptions(timeout: .seconds(20))
    let first = Task(executorPreference: channel.eventLoop) {
      try await channel.unary(GRPCTesting.TestService.unaryCall, Self.request, options: options)
    }
    let socket = try #require(await listener.accept(timeout: .seconds(10)), "the channel did not connect")
    try await Self.readRequest(socket, port: listener.port)
    socket.send(
      RawHTTP2.frame(
        type: 0x1, flags: 0x4, stream: 1,
        RawHTTP2.headerBlock([(":status", "200"), ("content-type", "application/grpc"), ("Trip-Id", "7")])))
    let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.type == 0x3 }
    }
    // RST_STREAM on stream 1, PROTOCOL_ERROR.
    let reset = try #require(frames.first { $0.type == 0x3 }, "frames: \(frames)")
    #expect(
      reset.bytes == [0x00, 0x00, 0x04, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01])
    let failure = await first.result
    guard case .failure(let error as RPCError) = failure else {
      Issue.record("the call did not fail with an RPCError: \(failure)")
      return
    }
    #expect(error.code == .internalError, "\(error)")
    #expect(error.message.contains("header block HTTP/2 forbids"), "\(error)")

    let second = Task(executorPreference: channel.eventLoop) {
      try await channel.unary(GRPCTesting.TestService.unaryCall, Self.request, options: options)
    }
    let (_, request, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.stream == 3 && $0.flags & 0x1 != 0 }
    }
    try #require(request.contains { $0.stream == 3 && $0.type == 0x1 }, "frames: \(request)")
    socket.send(Self.answer(on: 3))
    let response = try await second.value
    #expect(response.message.payload?.body == Array("abc".utf8))
  }

  /// REFUSED_STREAM says the server did not process the stream (RFC 9113 8.7): the stream
  /// hands its connection a retry, and the pool sends the same request again, whole, on the
  /// connection's next stream, with no wait for the first retry.
  @Test("a stream refused with REFUSED_STREAM is sent again whole on stream 3 and completes")
  func refusedStreamRetried() async throws {
    let (call, socket, channel) = try await Self.startCall()
    defer { channel.close() }
    socket.send(RawHTTP2.frame(type: 0x3, stream: 1, [0x00, 0x00, 0x00, 0x07]))
    let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.stream == 3 && $0.flags & 0x1 != 0 }
    }
    let again = frames.filter { $0.stream == 3 }
    try #require(again.count == 2, "frames: \(frames)")
    #expect(again[0].type == 0x1 && again[0].flags == 0x4, "HEADERS, END_HEADERS: \(again[0])")
    // The same DATA as stream 1's (readRequest), END_STREAM, on stream 3.
    #expect(
      again[1].bytes == [0x00, 0x00, 0x0C, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03]
        + [0x00, 0x00, 0x00, 0x00, 0x07, 0x1A, 0x05, 0x12, 0x03, 0x78, 0x79, 0x7A])
    socket.send(Self.answer(on: 3))
    let response = try await call.value
    #expect(response.message.payload?.body == Array("abc".utf8))
  }

  @Test("a call cancelled before its answer resets its stream: RST_STREAM CANCEL")
  func cancelResets() async throws {
    let (call, socket, channel) = try await Self.startCall()
    defer { channel.close() }
    call.cancel()
    let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.type == 0x3 }
    }
    let reset = try #require(frames.first { $0.type == 0x3 }, "frames: \(frames)")
    #expect(
      reset.bytes == [0x00, 0x00, 0x04, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08])
    await #expect(throws: RPCError.self) { try await call.value }
    if case .failure(let error as RPCError) = await call.result {
      #expect(error.code == .cancelled)
    }
  }
}
