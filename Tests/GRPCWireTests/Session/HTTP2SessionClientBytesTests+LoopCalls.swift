import GRPCTestingProtos
import Testing

@testable import GRPCWire

/// A loop-driven call's end, byte by byte: when what the session hands over ends the call (the
/// server's trailers), the end reaches the call's driver once the batch is through — outside
/// nghttp2's callbacks, and within the same hand-over, not through the loop's queue.
extension HTTP2SessionClientBytesTests {
  /// What the completion of a loop-driven call saw as it ran.
  struct EndSeen: Sendable {
    var result: Result<GRPCTesting.SimpleResponse, RPCError>
    /// nghttp2 was running (its callbacks may only record).
    var insideNGHTTP2: Bool
    /// The connection's session was handing its batch over: the end came from the batch
    /// that ended the call, not later from the loop's queue.
    var duringHandOver: Bool
  }

  @Test("a loop-driven call ended by trailers hears of it after the batch, outside nghttp2")
  func loopCallEndAfterBatch() async throws {
    let listener = try RawListener()
    let channel = GRPCChannel(host: "127.0.0.1", port: listener.port)
    defer { channel.close() }
    let loop = channel.eventLoop
    let (ends, report) = AsyncStream.makeStream(of: EndSeen.self)
    let request = Self.request
    let started: Bool = await withCheckedContinuation { continuation in
      loop.execute {
        let call = try? channel.startUnary(
          GRPCTesting.TestService.unaryCall, request, options: CallOptions()
        ) { result in
          let session = channel.pool.value.connections.first?.session
          report.yield(
            EndSeen(
              result: result, insideNGHTTP2: loop.insideNGHTTP2,
              duringHandOver: session?.isHandingOver == true))
        }
        continuation.resume(returning: call != nil)
      }
    }
    try #require(started, "the loop-driven call did not start")
    let socket = try #require(
      await listener.accept(timeout: .seconds(10)), "the channel did not connect")
    try await Self.readRequest(socket, port: listener.port)
    // HEADERS, DATA and trailers in one write: one read, one batch, which ends the call.
    socket.send(Self.answer)
    let end = try #require(try await first("the call's end", of: ends, within: .seconds(10)))
    #expect(try end.result.get().payload?.body == Array("abc".utf8))
    #expect(!end.insideNGHTTP2)
    #expect(end.duringHandOver)
  }
}
