import GRPCTestingProtos
import PeerSupport
import Testing

@testable import GRPCWire

/// Unary handlers registered with `registerOnLoop`: answered on the connection's event loop with no task,
/// and, against a raw HTTP/2 client, held to the rules a task-run handler keeps — request
/// cardinality, and the connection's send budget. The raw-client cases run against
/// `interop-server` with and without `--unary-on-loop`, so both paths answer alike.
@Suite("Unary handlers on the event loop", .timeLimit(.minutes(2)))
struct LoopHandlerTests {
  typealias Service = GRPCTesting.TestService

  /// Which way interop-server runs its unary handlers.
  enum Mode: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case task, loop
    var arguments: [String] { self == .loop ? ["--unary-on-loop"] : [] }
    var testDescription: String { self == .loop ? "on the loop" : "in a task" }
  }

  @Test("the handler runs on the server's loop thread with no task, and answers")
  func runsOnTheLoopWithoutATask() async throws {
    let loop = EventLoop(name: "loop-handler-test")
    defer { loop.shutdown() }
    let server = GRPCServer(eventLoop: loop)
    let seen = Observed<(inLoop: Bool, hadTask: Bool)?>(nil)
    server.registerOnLoop(unary: Service.unaryCall) { request, _ in
      seen.update { $0 = (loop.inEventLoop, withUnsafeCurrentTask { $0 != nil }) }
      var response = GRPCTesting.SimpleResponse()
      var payload = GRPCTesting.Payload()
      payload.body = [UInt8](repeating: 7, count: Int(request.responseSize))
      response.payload = payload
      return response
    }
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    var request = GRPCTesting.SimpleRequest()
    request.responseSize = 100_000
    let response = try await channel.unary(Service.unaryCall, request)
    #expect(response.message.payload?.body == [UInt8](repeating: 7, count: 100_000))
    let (inLoop, hadTask) = try #require(seen.value)
    #expect(inLoop && !hadTask, "inLoop \(inLoop), in a task \(hadTask)")
    await server.shutdown(gracePeriod: .seconds(1))
  }

  /// `register(unary:)` with a closure that does not await must stay a task: only
  /// `registerOnLoop` moves a handler onto the loop.
  @Test("register(unary:) with a closure that never awaits still runs it in a task")
  func plainRegisterStaysATask() async throws {
    let server = GRPCServer()
    let inTask = Observed<Bool?>(nil)
    server.register(unary: Service.emptyCall) { _, _ in
      inTask.update { $0 = withUnsafeCurrentTask { $0 != nil } }
      return GRPCTesting.Empty()
    }
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    #expect(inTask.value == true)
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a thrown RPCError is the call's status, with the trailing metadata the handler set")
  func thrownStatus() async throws {
    let server = GRPCServer()
    server.registerOnLoop(unary: Service.emptyCall) { _, context in
      context.setTrailingMetadata(["x-why": "because"])
      throw RPCError(code: .failedPrecondition, message: "not now")
    }
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    let error = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    }
    #expect(error.code == .failedPrecondition && error.message == "not now", "\(error)")
    #expect(error.metadata.first("x-why") == "because", "\(error.metadata)")
    await server.shutdown(gracePeriod: .seconds(1))
  }

  /// Interceptors are async code: with one, the method runs as a task that the interceptor
  /// wraps, as any other handler.
  @Test("with an interceptor the handler runs in a task, inside the interceptor")
  func interceptedRunsInATask() async throws {
    let calls = Observed<[String]>([])
    var options = ServerOptions()
    options.interceptors = [RecordingInterceptor(calls: calls)]
    let server = GRPCServer(options: options)
    server.registerOnLoop(unary: Service.emptyCall) { _, _ in
      let inTask = withUnsafeCurrentTask { $0 != nil }
      calls.update { $0.append(inTask ? "handler in a task" : "no task") }
      return GRPCTesting.Empty()
    }
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty())
    #expect(calls.value == ["intercepted", "handler in a task"])
    await server.shutdown(gracePeriod: .seconds(1))
  }

  /// `hostile_client.py <name>` against an interop-server running its unary handlers `mode`.
  func attack(_ name: String, _ mode: Mode) async throws -> AttackReport {
    try await withInteropServer(arguments: mode.arguments) { server in
      try await AttackReport.run(name, port: server.port)
    }.result
  }

  @Test(
    "no request message, or two, is UNIMPLEMENTED (12); one is answered OK",
    arguments: Mode.allCases)
  func requestCardinality(_ mode: Mode) async throws {
    let report = try await attack("unary-cardinality", mode)
    let statuses = Dictionary(
      uniqueKeysWithValues: (report.calls ?? []).map { ($0.label, $0.grpcStatus) })
    #expect(statuses == ["none": 12, "two": 12, "one": 0], "\(report)")
  }

  /// The response of a call answered while the connection's send budget is spent (stalled
  /// streams of a client that does not read) waits for room, as a task-run handler's write
  /// does: no response headers while the budget stays spent; an answer once it frees.
  @Test(
    "while the connection's send budget is spent a unary call waits, then is answered once room frees",
    arguments: Mode.allCases)
  func waitsForTheSendBudget(_ mode: Mode) async throws {
    let report = try await attack("budget-queue", mode)
    #expect(report.error == nil, "\(report)")
    #expect(report.unaryHeadersDuringHold == false, "\(report)")
    let unary = try #require(report.calls?.first { $0.label == "unary" }, "\(report)")
    #expect(unary.ended && unary.grpcStatus == 0, "\(report)")
  }
}

/// Records that it ran, then runs the call.
private struct RecordingInterceptor: ServerInterceptor {
  let calls: Observed<[String]>

  func intercept(
    _ context: ServerContext, next: (ServerContext) async throws -> Void
  ) async throws {
    calls.update { $0.append("intercepted") }
    try await next(context)
  }
}
