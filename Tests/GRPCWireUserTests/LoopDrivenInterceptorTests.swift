import FleetSync
import GRPCTestingProtos
import GRPCWire
import Testing

// Built without package access, as LoopDrivenCallTests.swift says: public API only.

/// Interceptors on loop-driven calls, as a user writes them.
@Suite("Interceptors of loop-driven calls", .timeLimit(.minutes(1)))
struct LoopDrivenInterceptorTests {
  typealias Service = GRPCTesting.TestService
  typealias Calls = LoopDrivenCallTests

  /// What an interceptor saw of each call it ended.
  final class Log: Sendable {
    struct Entry: Sendable {
      var kind: CallKind
      var status: StatusCode
      var head: [Metadata.Value]
      var stampSeen: [Metadata.Value]
      var responses: Int
      var onLoop: Bool
      var inTask: Bool
    }
    let entries = PosixMutex<[Entry]>([])
    let prepared = PosixMutex(0)
  }

  /// Stamps each call's metadata when it is prepared and logs how each call ended.
  struct Stamping: LoopClientInterceptor {
    let log: Log
    let loop: EventLoop

    func prepare(_ call: inout ClientCall) throws(RPCError) {
      log.prepared.withLock { $0 += 1 }
      call.options.metadata.add("x-stamp", "s1")
    }

    func callEnded(_ call: ClientCall, _ summary: ClientCallSummary, after duration: Duration) {
      let entry = Log.Entry(
        kind: call.kind, status: summary.status.code, head: summary.initialMetadata["x-head"],
        stampSeen: summary.trailingMetadata["x-stamp-seen"],
        responses: summary.responseMessages, onLoop: loop.inEventLoop,
        inTask: withUnsafeCurrentTask { $0 != nil })
      log.entries.withLock { $0.append(entry) }
    }
  }

  /// An async interceptor: it could bind task-locals around `next`.
  struct Passing: ClientInterceptor {
    func intercept(_ call: ClientCall, next: (ClientCall) async throws -> ClientCallSummary)
      async throws -> ClientCallSummary
    {
      try await next(call)
    }
  }

  /// Where a poll's callback ran.
  final class Answers: Sendable {
    let seen = PosixMutex<[(size: Int, onLoop: Bool, inTask: Bool)]>([])
  }

  /// Polls `count` times from one prepared call, one after another, each started in the
  /// previous one's callback, and waits for the last answer.
  static func poll(
    _ channel: GRPCChannel, _ prepared: PreparedCall, count: Int, sizes: [Int32]
  ) async throws -> Answers {
    let answers = Answers()
    @Sendable func start(_ index: Int) throws(RPCError) {
      let framed = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: sizes[index]))
      _ = try channel.startUnary(
        prepared, framedRequest: framed, as: GRPCTesting.SimpleResponse.self
      ) { result in
        let size = (try? result.get())?.payload?.body.count ?? -1
        let inTask = withUnsafeCurrentTask { $0 != nil }
        answers.seen.withLock { $0.append((size, channel.eventLoop.inEventLoop, inTask)) }
        if index + 1 < count { try? start(index + 1) }
      }
    }
    _ = try await Calls.onLoop(channel.eventLoop) { () throws(RPCError) in try start(0) }
    try await Calls.wait(answers.seen, "the polls did not end") { $0.count >= count }
    return answers
  }

  /// Runs `body` with a channel to a fresh test server whose interceptors `interceptors`
  /// makes for its loop and `log`; closes and stops both after it.
  static func withChannel(
    _ interceptors: (Log, EventLoop) -> [any ClientInterceptor],
    _ body: (GRPCChannel, Log) async throws -> Void
  ) async throws {
    let log = Log()
    try await Calls.withChannel(
      to: Calls.makeServer(), loopName: "user-interceptors",
      options: { loop in
        var options = ChannelOptions()
        options.interceptors = interceptors(log, loop)
        return options
      }
    ) { channel in try await body(channel, log) }
  }

  @Test("a loop interceptor sees each poll's metadata and status; the poll stays on the loop")
  func loopInterceptor() async throws {
    try await Self.withChannel({ log, loop in [Stamping(log: log, loop: loop)] }) {
      channel, log in
      let prepared = try channel.prepare(Service.unaryCall, options: CallOptions()).laidOut()
      // Once per prepared call, not per poll.
      #expect(log.prepared.withLock { $0 } == 1)
      let answers = try await Self.poll(channel, prepared, count: 5, sizes: [1, 2, -1, 4, 5])
      let seen = answers.seen.withLock { $0 }
      #expect(seen.map(\.size) == [1, 2, -1, 4, 5])
      #expect(seen.allSatisfy { $0.onLoop && !$0.inTask })
      let entries = log.entries.withLock { $0 }
      #expect(entries.map(\.status) == [.ok, .ok, .invalidArgument, .ok, .ok])
      #expect(entries.allSatisfy { $0.kind == .unary })
      // The refused call's answer is trailers only (the handler threw before any response).
      let head: [Metadata.Value] = [.string("h")]
      #expect(entries.map(\.head) == [head, head, [], head, head])
      #expect(entries.allSatisfy { $0.stampSeen == [.string("s1")] })
      #expect(entries.map(\.responses) == [1, 1, 0, 1, 1])
      #expect(entries.allSatisfy { $0.onLoop && !$0.inTask })
      #expect(log.prepared.withLock { $0 } == 1)
    }
  }

  @Test("with an async interceptor among them, the call runs in a task, answered on the loop")
  func asyncInterceptorFallsBack() async throws {
    try await Self.withChannel({ log, loop in [Stamping(log: log, loop: loop), Passing()] }) {
      channel, log in
      let prepared = try channel.prepare(Service.unaryCall, options: CallOptions())
      // Run in the task, through `intercept`, as the call starts.
      #expect(log.prepared.withLock { $0 } == 0)
      let answers = try await Self.poll(channel, prepared, count: 2, sizes: [3, 3])
      let seen = answers.seen.withLock { $0 }
      #expect(seen.map(\.size) == [3, 3])
      #expect(seen.allSatisfy { $0.onLoop && $0.inTask })
      let entries = log.entries.withLock { $0 }
      #expect(entries.map(\.status) == [.ok, .ok])
      #expect(entries.allSatisfy { $0.stampSeen == [.string("s1")] && $0.inTask })
      #expect(log.prepared.withLock { $0 } == 2)
    }
  }

  @Test("with an async interceptor, what makes a call impossible is still thrown at its start")
  func asyncInterceptorRefusedAtStart() async throws {
    let loop = EventLoop(name: "user-async-refused")
    var options = ChannelOptions()
    options.interceptors = [Passing()]
    // Nothing listens on port 1: a call that got as far as connecting would fail UNAVAILABLE
    // in its callback, not at its start.
    let channel = GRPCChannel(host: "127.0.0.1", port: 1, options: options, eventLoop: loop)
    @Sendable func startError(_ options: CallOptions, streaming: Bool) async throws -> RPCError? {
      try await Calls.onLoop(loop) { () -> RPCError? in
        do throws(RPCError) {
          if streaming {
            _ = try channel.startServerStreaming(
              Service.streamingOutputCall, GRPCTesting.StreamingOutputCallRequest(),
              options: options, onMessage: { _ in }, onEnd: { _ in })
          } else {
            _ = try channel.startUnary(
              Service.unaryCall, GRPCTesting.SimpleRequest(), options: options) { _ in }
          }
          return nil
        } catch {
          return error
        }
      }
    }
    for streaming in [false, true] {
      let expired = try await startError(CallOptions(timeout: .zero), streaming: streaming)
      #expect(expired?.code == .deadlineExceeded)
    }
    channel.close()
    for streaming in [false, true] {
      #expect(try await startError(CallOptions(), streaming: streaming)?.code == .unavailable)
    }
    loop.shutdown()
  }

  @Test("a loop interceptor of a server-streaming call sees its kind and its responses")
  func serverStreaming() async throws {
    try await Self.withChannel({ log, loop in [Stamping(log: log, loop: loop)] }) {
      channel, log in
      var request = GRPCTesting.StreamingOutputCallRequest()
      request.responseParameters = (1...7).map {
        var parameters = GRPCTesting.ResponseParameters()
        parameters.size = Int32($0)
        return parameters
      }
      let outcomes = Calls.Outcomes()
      _ = try await Calls.onLoop(channel.eventLoop) { [request] () throws(RPCError) in
        try channel.startServerStreaming(
          Service.streamingOutputCall, request, options: CallOptions(),
          onMessage: { response in
            outcomes.seen.withLock { $0.sizes.append(response.payload?.body.count ?? 0) }
          },
          onEnd: { error in
            let inTask = withUnsafeCurrentTask { $0 != nil }
            outcomes.seen.withLock { seen in
              if let error { seen.errors.append(error) }
              if inTask { seen.inTask += 1 }
              seen.done = true
            }
          })
      }
      try await Calls.wait(outcomes) { $0.done }
      #expect(outcomes.seen.withLock { $0.sizes } == Array(1...7))
      #expect(outcomes.seen.withLock { $0.inTask } == 0)
      let entries = log.entries.withLock { $0 }
      #expect(entries.count == 1)
      #expect(entries.first?.kind == .serverStreaming)
      #expect(entries.first?.status == .ok)
      #expect(entries.first?.responses == 7)
      #expect(entries.first.map { $0.onLoop && !$0.inTask } == true)
    }
  }

  @Test("preparing a method tells the loop interceptors the method's kind")
  func preparedKind() throws {
    final class Kinds: LoopClientInterceptor {
      let seen = PosixMutex<[CallKind]>([])
      func prepare(_ call: inout ClientCall) throws(RPCError) {
        let kind = call.kind
        seen.withLock { $0.append(kind) }
      }
      func callEnded(_ call: ClientCall, _ summary: ClientCallSummary, after duration: Duration) {}
    }
    let kinds = Kinds()
    var options = ChannelOptions()
    options.interceptors = [kinds]
    // Preparing connects nowhere: nothing needs to listen on port 1.
    let channel = GRPCChannel(host: "127.0.0.1", port: 1, options: options)
    _ = try channel.prepare(Service.unaryCall)
    _ = try channel.prepare(Service.streamingOutputCall)
    #expect(kinds.seen.withLock { $0 } == [.unary, .serverStreaming])
    channel.close()
  }

  @Test("a request is framed with the compression a loop interceptor leaves in the options")
  func interceptorCompression() async throws {
    struct Uncompressing: LoopClientInterceptor {
      func prepare(_ call: inout ClientCall) throws(RPCError) { call.options.compression = nil }
      func callEnded(_ call: ClientCall, _ summary: ClientCallSummary, after duration: Duration) {}
    }
    try await Self.withChannel({ _, _ in [Uncompressing()] }) { channel, _ in
      let outcomes = Calls.Outcomes()
      // Asked for gzip, which the interceptor takes away: a request framed compressed without
      // a grpc-encoding field would be refused by the server.
      _ = try await Calls.onLoop(channel.eventLoop) { () throws(RPCError) in
        try channel.startUnary(
          Service.unaryCall, GRPCTesting.SimpleRequest(responseSize: 4),
          options: CallOptions(compression: .gzip)
        ) { result in
          outcomes.seen.withLock { seen in
            switch result {
            case .success(let response): seen.sizes.append(response.payload?.body.count ?? 0)
            case .failure(let error): seen.errors.append(error)
            }
            seen.done = true
          }
        }
      }
      try await Calls.wait(outcomes) { $0.done }
      #expect(outcomes.seen.withLock { $0.errors }.isEmpty)
      #expect(outcomes.seen.withLock { $0.sizes } == [4])
    }
  }

  @Test("a loop interceptor that refuses the call makes preparing it throw its error")
  func refusal() async throws {
    struct Refusing: LoopClientInterceptor {
      func prepare(_ call: inout ClientCall) throws(RPCError) {
        throw RPCError(code: .permissionDenied, message: "not this one")
      }
      func callEnded(_ call: ClientCall, _ summary: ClientCallSummary, after duration: Duration) {}
    }
    var options = ChannelOptions()
    options.interceptors = [Refusing()]
    let channel = GRPCChannel(host: "127.0.0.1", port: 1, options: options)
    var refused: RPCError? = nil
    do throws(RPCError) {
      _ = try channel.prepare(Service.unaryCall)
    } catch {
      refused = error
    }
    #expect(refused?.code == .permissionDenied)
    #expect(refused?.message == "not this one")
    channel.close()
  }
}
