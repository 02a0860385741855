import FleetSync
import GRPCTestingProtos
import Testing

@testable import GRPCWire

/// A loop-driven unary call's response lent to its receiver: read where it arrived when the
/// call ends in the read that brought it, and copied otherwise (a message split across
/// reads, or trailers that come in a later read, which the loop's read buffer is reused for).
extension HTTP2SessionClientBytesTests {
  /// What a call's end brought its receiver: whether the response was lent, and its bytes;
  /// the test waits for it on a continuation the end resumes.
  final class LendingReceiver: UnaryCallReceiver, Sendable {
    typealias Ending = Result<(lent: Bool, bytes: [UInt8]), RPCError>
    private struct State {
      var ending: Ending?
      var waiter: CheckedContinuation<Ending?, Never>?
      var gaveUp = false
    }
    private let state = PosixMutex(State())

    func ended(lending response: LentMessage) { end(.success((true, Array(response.bytes)))) }

    func ended(_ result: Result<ReceivedMessage, RPCError>) {
      end(result.map { (false, $0.bytes) })
    }

    private func end(_ ending: Ending) {
      let waiter = state.withLock { state in
        state.ending = ending
        defer { state.waiter = nil }
        return state.waiter
      }
      waiter?.resume(returning: ending)
    }

    /// The call's end, once it has come; nil if the waiting task is cancelled first.
    func ending() async -> Ending? {
      await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
          let now: Ending?? = state.withLock { state in
            if let ending = state.ending { return .some(ending) }
            if state.gaveUp { return .some(nil) }
            state.waiter = continuation
            return nil
          }
          if let now { continuation.resume(returning: now) }
        }
      } onCancel: {
        let waiter = state.withLock { state in
          state.gaveUp = true
          defer { state.waiter = nil }
          return state.waiter
        }
        waiter?.resume(returning: nil)
      }
    }
  }

  /// SimpleResponse{payload: Payload{body: "abc"}}, as ``answer`` carries it.
  static let answeredMessage: [UInt8] = [0x0A, 0x05, 0x12, 0x03, 0x61, 0x62, 0x63]

  /// Starts a loop-driven unary call of ``request`` reporting to a fresh receiver; returns
  /// it, the server's end of the connection (the request read off it) and the channel.
  static func startLendingCall() async throws -> (
    receiver: LendingReceiver, socket: RawSocket, channel: GRPCChannel
  ) {
    let listener = try RawListener()
    let channel = GRPCChannel(host: "127.0.0.1", port: listener.port)
    let receiver = LendingReceiver()
    let framed = GRPCChannel.frame(Self.request)
    let prepared = try channel.prepare(GRPCTesting.TestService.unaryCall, options: CallOptions())
    let started: Bool = await withCheckedContinuation { continuation in
      channel.eventLoop.execute {
        let call = try? channel.startUnary(prepared, framedRequest: framed, receiver: receiver)
        continuation.resume(returning: call != nil)
      }
    }
    try #require(started, "the loop-driven call did not start")
    let socket = try #require(
      await listener.accept(timeout: .seconds(10)), "the channel did not connect")
    try await readRequest(socket, port: listener.port)
    return (receiver, socket, channel)
  }

  /// What `receiver` saw, once its call ended (within 10 s).
  static func ending(of receiver: LendingReceiver) async throws -> (lent: Bool, bytes: [UInt8]) {
    let ending = await withTaskGroup(of: LendingReceiver.Ending?.self) { group in
      group.addTask { await receiver.ending() }
      group.addTask {
        try? await Task.sleep(for: .seconds(10))  // the wait's timeout
        return nil
      }
      let first = await group.next() ?? nil
      group.cancelAll()
      return first
    }
    return try #require(ending, "the call did not end within 10 s").get()
  }

  @Test("a response whole in the read that ends its call is lent, byte for byte")
  func lentResponse() async throws {
    let (receiver, socket, channel) = try await Self.startLendingCall()
    defer { channel.close() }
    socket.send(Self.answer)
    let seen = try await Self.ending(of: receiver)
    #expect(seen.lent)
    #expect(seen.bytes == Self.answeredMessage)
  }

  /// The DATA in one read, the trailers in the next, behind enough PINGs to write over where
  /// the message lay in the loop's read buffer: the response was copied before that read.
  @Test("a response whose trailers come in a later read is copied before the buffer is reused")
  func lentResponseKeptAcrossReads() async throws {
    let (receiver, socket, channel) = try await Self.startLendingCall()
    defer { channel.close() }
    let trailersLength = 9 + RawHTTP2.headerBlock([("grpc-status", "0")]).count
    socket.send(Array(Self.answer.dropLast(trailersLength)))
    // A PING's ACK says the first part was read (and handed over) before the rest is sent.
    socket.send(RawHTTP2.frame(type: 0x6, stream: 0, [1, 2, 3, 4, 5, 6, 7, 8]))
    let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.type == 0x6 && $0.flags & 0x1 != 0 }
    }
    try #require(frames.contains { $0.type == 0x6 }, "no PING ACK: \(frames)")
    let pings = (0..<12).flatMap { n in
      RawHTTP2.frame(type: 0x6, stream: 0, [UInt8](repeating: UInt8(0xF0 + n), count: 8))
    }
    socket.send(pings + Array(Self.answer.suffix(trailersLength)))
    let seen = try await Self.ending(of: receiver)
    #expect(!seen.lent)
    #expect(seen.bytes == Self.answeredMessage)
  }

  /// The message in two DATA frames, the first in one read (a PING's ACK says so), the
  /// second with the trailers in the next: the deframer gathers it in a payload of its own.
  @Test("a response split across reads is gathered whole, not lent")
  func responseSplitAcrossReads() async throws {
    let (receiver, socket, channel) = try await Self.startLendingCall()
    defer { channel.close() }
    let framed = [0x00, 0x00, 0x00, 0x00, 0x07] + Self.answeredMessage
    socket.send(
      RawHTTP2.frame(
        type: 0x1, flags: 0x4, stream: 1,
        RawHTTP2.headerBlock([(":status", "200"), ("content-type", "application/grpc")]))
        + RawHTTP2.frame(type: 0x0, stream: 1, Array(framed.prefix(6)))
        + RawHTTP2.frame(type: 0x6, stream: 0, [1, 2, 3, 4, 5, 6, 7, 8]))
    let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
      frames.contains { $0.type == 0x6 && $0.flags & 0x1 != 0 }
    }
    try #require(frames.contains { $0.type == 0x6 }, "no PING ACK: \(frames)")
    socket.send(
      RawHTTP2.frame(type: 0x0, stream: 1, Array(framed.dropFirst(6)))
        + RawHTTP2.frame(
          type: 0x1, flags: 0x5, stream: 1, RawHTTP2.headerBlock([("grpc-status", "0")])))
    let seen = try await Self.ending(of: receiver)
    #expect(!seen.lent)
    #expect(seen.bytes == Self.answeredMessage)
  }
}
