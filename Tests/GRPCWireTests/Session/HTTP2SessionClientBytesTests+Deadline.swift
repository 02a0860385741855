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
    let request = Self.request
    // Long enough for the connection's start and the request to be read first on a loaded
    // machine: a call whose deadline passes while it waits for SETTINGS has no stream to reset.
    let call = Task(executorPreference: channel.eventLoop) {
      try await channel.unary(
        GRPCTesting.TestService.unaryCall, request, options: CallOptions(timeout: .seconds(1)))
    }
    let socket = try #require(
      await listener.accept(timeout: .seconds(10)), "the channel did not connect")
    try await Self.readRequest(socket, port: listener.port)
    let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.type == 0x3 }
    }
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
