import FleetSync
import GRPCTestingProtos
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@testable import GRPCWire

/// Streams and sessions are freed, in both roles, byte by byte: a session's table holds its
/// streams and each stream holds its session, so a stream left in the table would keep both
/// alive for good, silently. Weak references to a call's stream and its session, taken on the
/// loop while the call is open, must come to nil once the call ends (the stream) and once its
/// connection closes (the session), and when the connection drops in the middle of the call.
@Suite("HTTP2Session: streams and sessions freed", .timeLimit(.minutes(1)))
struct StreamLifetimeTests {
  /// Weak references to one call's stream and session, set on the loop while the call is
  /// open, and read there (``waitUntil(on:timeout:_:)``) or once the loop has stopped.
  final class Held: @unchecked Sendable {
    // @unchecked Sendable: written on the loop, read on it, or after its thread has ended.
    weak var stream: StreamCore?
    weak var session: HTTP2Session?
    /// The stream was of the role's type.
    var roleMatched = false

    func record<S: StreamCore>(_ stream: S?, as _: S.Type) {
      self.stream = stream
      session = stream?.session
      roleMatched = stream != nil
    }

    var recorded: Bool { roleMatched }
  }

  /// Waits until `done` holds, checked on `loop` (after what is queued there) every
  /// millisecond or so; false once `timeout` passed first, or when the loop has stopped (work
  /// queued to a stopped loop never runs, so each look is bounded by what is left of
  /// `timeout`). A weak reference gives no notice of its object's end, so the test looks.
  static func waitUntil(
    on loop: EventLoop, timeout: Duration = .seconds(10), _ done: @escaping @Sendable () -> Bool
  ) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      guard let holds = await loop.answer(within: deadline - .now, done) else {
        return false
      }
      if holds { return true }
      try? await Task.sleep(for: .milliseconds(1))
    }
    return false
  }

  // MARK: Client role

  /// A call started on a fresh channel to a raw peer (``HTTP2SessionClientBytesTests``), its
  /// request read, with weak references to its stream and the session it is open on.
  static func clientCall() async throws -> (
    call: Task<ClientResponse<GRPCTesting.SimpleResponse>, any Error>, socket: RawSocket,
    channel: GRPCChannel, held: Held
  ) {
    let (call, socket, channel) = try await HTTP2SessionClientBytesTests.startCall()
    let held = Held()
    await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
      channel.eventLoop.execute {
        let session = channel.pool.value.connections.first?.session
        held.record(session?.streams.values.first as? ClientStream, as: ClientStream.self)
        c.resume()
      }
    }
    return (call, socket, channel, held)
  }

  @Test("client: a call's stream is freed once the call ends, its session once the channel closes")
  func clientCallEnds() async throws {
    let (call, socket, channel, held) = try await Self.clientCall()
    defer { channel.close() }
    try #require(held.recorded, "no ClientStream open in the connection's session")
    socket.send(HTTP2SessionClientBytesTests.answer)
    _ = try await call.value
    let loop = channel.eventLoop
    #expect(await Self.waitUntil(on: loop) { held.stream == nil }, "the ClientStream lives on")
    #expect(await Self.waitUntil(on: loop) { held.session != nil }, "the session went early")
    // Closed, the channel's loop has stopped and its thread has ended (joined), and with it
    // whatever its queue and timers held: the session is gone now or never.
    channel.close()
    #expect(held.session == nil, "the session lives on")
  }

  @Test("client: the connection dropped mid-call frees the call's stream and the session")
  func clientConnectionDrops() async throws {
    let (call, socket, channel, held) = try await Self.clientCall()
    defer { channel.close() }
    try #require(held.recorded, "no ClientStream open in the connection's session")
    shutdown(socket.fd, Int32(SHUT_RDWR))
    let failure = await call.result
    guard case .failure(let error as RPCError) = failure else {
      Issue.record("the call did not fail with an RPCError: \(failure)")
      return
    }
    #expect(error.code == .unavailable, "\(error)")
    let loop = channel.eventLoop
    #expect(await Self.waitUntil(on: loop) { held.stream == nil }, "the ClientStream lives on")
    #expect(await Self.waitUntil(on: loop) { held.session == nil }, "the session lives on")
  }

  // MARK: Server role

  /// A server on one loop of the test's, whose UnaryCall handler records its stream and
  /// session in `held`, then reads requests until the client's stream ends and answers OK
  /// with no message; `body` runs with its port and its loop.
  static func withRecordingServer(
    _ held: Held, _ body: (Int, EventLoop) async throws -> Void
  ) async throws {
    let loop = EventLoop(name: "StreamLifetimeTests")
    defer { loop.shutdown() }
    let server = GRPCServer(eventLoop: loop)
    server.add("/grpc.testing.TestService/UnaryCall", []) { stream, _ in
      await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
        stream.loop.execute {
          held.record(stream, as: ServerStream.self)
          c.resume()
        }
      }
      while try await stream.nextRequest() != nil {}
    }
    let port = try await server.start()
    do {
      try await body(port, loop)
    } catch {
      await server.shutdown(gracePeriod: .seconds(1))
      throw error
    }
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("server: a call's stream is freed once answered, its session once the connection closes")
  func serverCallEnds() async throws {
    let held = Held()
    try await Self.withRecordingServer(held) { port, loop in
      let socket = try RawSocket(port: port)
      socket.send(RawHTTP2.preface + HTTP2SessionServerBytesTests.unaryRequest)
      let (_, frames, _) = await socket.frames(timeout: .seconds(10)) { frames in
        frames.contains { $0.stream == 1 && $0.type == 0x1 && $0.flags & 0x1 != 0 }
      }
      try #require(frames.contains { $0.stream == 1 && $0.type == 0x1 }, "frames: \(frames)")
      try #require(held.recorded, "the handler saw no ServerStream")
      #expect(await Self.waitUntil(on: loop) { held.stream == nil }, "the ServerStream lives on")
      #expect(await Self.waitUntil(on: loop) { held.session != nil }, "the session went early")
      shutdown(socket.fd, Int32(SHUT_RDWR))
      #expect(await Self.waitUntil(on: loop) { held.session == nil }, "the session lives on")
    }
  }

  @Test("server: the connection dropped mid-call frees the call's stream and the session")
  func serverConnectionDrops() async throws {
    let held = Held()
    try await Self.withRecordingServer(held) { port, loop in
      let socket = try RawSocket(port: port)
      // The request's HEADERS only: the handler waits for its first message.
      socket.send(RawHTTP2.preface + HTTP2SessionServerBytesTests.requestHeaders(on: 1))
      try #require(
        await Self.waitUntil(on: loop) { held.recorded }, "the handler saw no ServerStream")
      #expect(await Self.waitUntil(on: loop) { held.stream != nil }, "the stream went early")
      shutdown(socket.fd, Int32(SHUT_RDWR))
      #expect(await Self.waitUntil(on: loop) { held.stream == nil }, "the ServerStream lives on")
      #expect(await Self.waitUntil(on: loop) { held.session == nil }, "the session lives on")
    }
  }
}
