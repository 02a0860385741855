import FleetSync
import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

// Built without package access, as LoopDrivenCallTests.swift says: public API only.

/// The generated client's loop-driven variants (`startUnaryCall`, `startStreamingOutputCall`
/// of `GRPCTesting.TestService.Client`, grpc-wire-gen) against our GRPCServer serving the
/// generated `ServiceProtocol`, and against grpcio's interop server: each answer on the loop
/// thread, in no task, with and without a loop interceptor.
@Suite("Generated stubs' loop-driven calls", .timeLimit(.minutes(1)))
struct GeneratedLoopStubTests {
  typealias Client = GRPCTesting.TestService.Client
  typealias Calls = LoopDrivenCallTests

  /// TestService as the generated protocol serves it: UnaryCall answers `response_size`
  /// bytes (INVALID_ARGUMENT for a negative size), StreamingOutputCall one response per
  /// parameter, of its size.
  struct Service: GRPCTesting.TestService.ServiceProtocol {
    func unaryCall(_ request: GRPCTesting.SimpleRequest, context: ServerContext)
      async throws -> GRPCTesting.SimpleResponse
    {
      if request.responseSize < 0 { throw RPCError(code: .invalidArgument, message: "negative") }
      var response = GRPCTesting.SimpleResponse()
      response.payload = Self.payload(Int(request.responseSize))
      return response
    }

    func streamingOutputCall(
      _ request: GRPCTesting.StreamingOutputCallRequest,
      responses: ResponseWriter<GRPCTesting.StreamingOutputCallResponse>, context: ServerContext
    ) async throws {
      for parameters in request.responseParameters {
        var response = GRPCTesting.StreamingOutputCallResponse()
        response.payload = Self.payload(Int(parameters.size))
        try await responses.write(response)
      }
    }

    static func payload(_ size: Int) -> GRPCTesting.Payload {
      var payload = GRPCTesting.Payload()
      payload.body = [UInt8](repeating: 7, count: size)
      return payload
    }
  }

  /// What the loop code and the interceptor saw, in order.
  final class Events: Sendable {
    enum Event: Equatable {
      /// A response of this many payload bytes, or an error's code.
      case response(Int), failure(StatusCode), end(StatusCode?)
      /// The interceptor heard of a call's end: its path and status.
      case ended(String, StatusCode)
    }
    let seen = PosixMutex<[Event]>([])
    /// Callbacks (and interceptor hooks) that ran off the loop thread, or inside a task.
    let offLoop = PosixMutex(0)
    let inTask = PosixMutex(0)

    func record(_ event: Event, on loop: EventLoop) {
      if !loop.inEventLoop { offLoop.withLock { $0 += 1 } }
      if withUnsafeCurrentTask(body: { $0 != nil }) { inTask.withLock { $0 += 1 } }
      seen.withLock { $0.append(event) }
    }

    func wait(for count: Int) async throws {
      try await Calls.wait(seen, "\(count) events did not arrive") { $0.count >= count }
    }
  }

  /// Records each call's end, as a user's metrics interceptor would.
  struct Recording: LoopClientInterceptor {
    let events: Events
    let loop: EventLoop

    func callEnded(_ call: ClientCall, _ summary: ClientCallSummary, after duration: Duration) {
      events.record(.ended(call.method.method, summary.status.code), on: loop)
    }
  }

  /// Runs `body` with a client over a channel (with a `Recording` interceptor when
  /// `intercepted`) to a fresh GRPCServer serving `Service`; stops both after it.
  static func withOurServer(
    intercepted: Bool = false, _ body: (Client, Events) async throws -> Void
  ) async throws {
    let server = GRPCServer()
    server.register(Service())
    let events = Events()
    try await Calls.withChannel(
      to: server, loopName: "generated-loop-stubs",
      options: { loop in
        var options = ChannelOptions()
        if intercepted { options.interceptors = [Recording(events: events, loop: loop)] }
        return options
      }
    ) { channel in try await body(Client(channel: channel), events) }
  }

  /// Starts a `startUnaryCall` asking for `size` bytes, on the client's loop.
  static func unary(_ client: Client, size: Int32, _ events: Events) async throws {
    let loop = client.channel.eventLoop
    _ = try await Calls.onLoop(loop) { () throws(RPCError) in
      try client.startUnaryCall(GRPCTesting.SimpleRequest(responseSize: size)) { result in
        switch result {
        case .success(let response):
          events.record(.response(response.payload?.body.count ?? -1), on: loop)
        case .failure(let error): events.record(.failure(error.code), on: loop)
        }
      }
    }
  }

  /// Starts a `startStreamingOutputCall` asking for one response per size, on the loop.
  static func streaming(_ client: Client, sizes: [Int32], _ events: Events) async throws {
    let loop = client.channel.eventLoop
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = sizes.map {
      var parameters = GRPCTesting.ResponseParameters()
      parameters.size = $0
      return parameters
    }
    _ = try await Calls.onLoop(loop) { [request] () throws(RPCError) in
      try client.startStreamingOutputCall(
        request,
        onMessage: { events.record(.response($0.payload?.body.count ?? -1), on: loop) },
        onEnd: { events.record(.end($0?.code), on: loop) })
    }
  }

  static func expectOnLoopInNoTask(_ events: Events) {
    #expect(events.offLoop.withLock { $0 } == 0)
    #expect(events.inTask.withLock { $0 } == 0)
  }

  @Test("unary: the response arrives in the completion, on the loop, in no task")
  func unary() async throws {
    try await Self.withOurServer { client, events in
      try await Self.unary(client, size: 314, events)
      try await events.wait(for: 1)
      #expect(events.seen.withLock { $0 } == [.response(314)])
      Self.expectOnLoopInNoTask(events)
    }
  }

  @Test("with a loop interceptor the call stays task-free, and the interceptor sees its end")
  func intercepted() async throws {
    try await Self.withOurServer(intercepted: true) { client, events in
      try await Self.unary(client, size: 27, events)
      try await events.wait(for: 2)
      try await Self.unary(client, size: -1, events)
      try await events.wait(for: 4)
      // The interceptor hears of the end before the completion runs (its `report` comes
      // first), each on the loop, in no task.
      #expect(
        events.seen.withLock { $0 } == [
          .ended("UnaryCall", .ok), .response(27),
          .ended("UnaryCall", .invalidArgument), .failure(.invalidArgument),
        ])
      Self.expectOnLoopInNoTask(events)
    }
  }

  @Test("server streaming: every response in order, then the end, on the loop, in no task")
  func serverStreaming() async throws {
    try await Self.withOurServer { client, events in
      try await Self.streaming(client, sizes: [3, 1, 4, 1, 5], events)
      try await events.wait(for: 6)
      #expect(
        events.seen.withLock { $0 }
          == [.response(3), .response(1), .response(4), .response(1), .response(5), .end(nil)])
      Self.expectOnLoopInNoTask(events)
    }
  }

  @Test("the server's error status arrives as the completion's RPCError")
  func errorStatus() async throws {
    try await Self.withOurServer { client, events in
      try await Self.unary(client, size: -1, events)
      try await events.wait(for: 1)
      #expect(events.seen.withLock { $0 } == [.failure(.invalidArgument)])
      Self.expectOnLoopInNoTask(events)
    }
  }

  @Test("against grpcio's interop server: unary and server streaming, on the loop, no task")
  func grpcio() async throws {
    try await withPeerServer("interop_server.py") { server in
      let loop = EventLoop(name: "generated-loop-stubs-grpcio")
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port, eventLoop: loop)
      defer {
        channel.close()
        loop.shutdown()
      }
      let client = Client(channel: channel)
      let events = Events()
      try await Self.unary(client, size: 314_159, events)
      try await events.wait(for: 1)
      try await Self.streaming(client, sizes: [31_415, 9, 2_653], events)
      try await events.wait(for: 5)
      #expect(
        events.seen.withLock { $0 } == [
          .response(314_159), .response(31_415), .response(9), .response(2_653), .end(nil),
        ])
      Self.expectOnLoopInNoTask(events)
    }
  }
}
