import GRPCTestingProtos
import Testing

@testable import GRPCWire

/// A call past its deadline, byte by byte: the stream resets itself through its session (it
/// holds no connection), and the connection's part — a keepalive PING when nothing arrived for
/// a keepalive timeout — comes from the session asking its role, ahead of the reset.
extension HTTP2SessionClientBytesTests {
  @Test("a call past its deadline on a quiet connection: PING, then RST_STREAM CANCEL")
  func deadlineResetsAfterPing() async throws {
    let listener = try RawListener()
    var options = ChannelOptions()
    // No periodic PING within the test; a probe after the deadline once 50 ms were quiet.
    options.keepalive = ChannelOptions.Keepalive(
      interval: .seconds(3600), timeout: .milliseconds(50))
    let channel = GRPCChannel(host: "127.0.0.1", port: listener.port, options: options)
    defer { channel.close() }
    // The connection is ready before the call starts, so that the deadline covers the call
    // alone: one that passed while the test, held up on a loaded machine, had not yet sent
    // its SETTINGS would fail the call before it had a stream to reset.
    let (ready, signal) = AsyncStream.makeStream(of: Void.self)
    channel.whenReady { signal.yield() }
    let socket = try #require(
      await listener.accept(timeout: .seconds(10)), "the channel did not connect")
    try await Self.answerStart(socket)
    _ = try await first("the connection to become ready", of: ready, within: .seconds(10))
    let request = Self.request
    let call = Task(executorPreference: channel.eventLoop) {
      try await channel.unary(
        GRPCTesting.TestService.unaryCall, request, options: CallOptions(timeout: .seconds(1)))
    }
    let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.type == 0x3 }
    }
    // The request went out whole (HEADERS, then DATA with END_STREAM) before the reset.
    let sent = frames.filter { $0.stream == 1 }.map(\.type)
    #expect(sent == [0x1, 0x0, 0x3], "frames: \(frames)")
    let ping = try #require(frames.firstIndex { $0.type == 0x6 }, "no PING: \(frames)")
    let reset = try #require(frames.firstIndex { $0.type == 0x3 }, "frames: \(frames)")
    #expect(ping < reset, "the probe goes out with the reset, ahead of it: \(frames)")
    // PING: 8 bytes of opaque data, no ACK flag, stream 0.
    #expect(
      Array(frames[ping].bytes[0..<9]) == [0x00, 0x00, 0x08, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00])
    #expect(
      frames[reset].bytes
        == [0x00, 0x00, 0x04, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08])
    if case .failure(let error as RPCError) = await call.result {
      #expect(error.code == .deadlineExceeded)
    } else {
      Issue.record("the call did not fail with an RPCError")
    }
  }
}
