import FleetSync
import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

// This target is built without package access (`packageAccess: false` in Package.swift) and
// imports GRPCWire without @testable: it sees exactly what a user of the GRPCWire product
// sees, so every line here compiles only against public API. (FleetSync only for
// `PosixMutex`, a lock ThreadSanitizer sees, where a user would take the standard `Mutex`;
// PeerSupport for the tests' shared grpc.testing handlers, public API too.)

/// The loop-driven call (``LoopCall``) as a user writes it: a poller owned by the channel's
/// event loop that prepares its call and frames its request once, polls on the loop's timer,
/// gets each answer on the loop with no task, and hands its results over once per tick.
@Suite("Loop-driven calls, as a user makes them", .timeLimit(.minutes(1)))
struct LoopDrivenCallTests {
  typealias Service = GRPCTesting.TestService

  /// A server whose UnaryCall answers a payload of `response_size` bytes (INVALID_ARGUMENT
  /// for a negative size), with `x-head: h` in its response headers and each `x-stamp` of
  /// the request as `x-stamp-seen` in its trailers, and whose StreamingOutputCall sends one
  /// response of `size` bytes per parameter.
  static func makeServer(options: ServerOptions = ServerOptions()) -> GRPCServer {
    let server = GRPCServer(options: options)
    server.register(unary: Service.unaryCall) { request, context in
      var head = Metadata()
      head.add("x-head", "h")
      context.setInitialMetadata(head)
      var trailers = Metadata()
      for value in context.requestMetadata["x-stamp"] { trailers.add("x-stamp-seen", value) }
      context.setTrailingMetadata(trailers)
      if request.responseSize < 0 { throw RPCError(code: .invalidArgument, message: "negative") }
      var response = GRPCTesting.SimpleResponse()
      var payload = GRPCTesting.Payload()
      payload.body = [UInt8](repeating: 7, count: Int(request.responseSize))
      response.payload = payload
      return response
    }
    server.registerStreamingOutput()
    return server
  }

  /// What a test's loop code saw, handed over from the loop.
  final class Outcomes: Sendable {
    struct Seen {
      /// Response payload sizes, or -1 for a failed call, in the order they arrived.
      var sizes: [Int] = []
      var errors: [RPCError] = []
      /// Callbacks that ran off the loop thread, or inside a task.
      var offLoop = 0
      var inTask = 0
      /// End-of-tick hand-overs, and how many results they carried.
      var batches: [Int] = []
      var done = false
    }
    let seen = PosixMutex(Seen())
  }

  /// A poller of one resource, written as a user would: loop-only state in a `LoopBound`, one
  /// timer target, one receiver per call, and results handed over at the end of each tick.
  final class Poller: TimerTarget, TickEndHandler, UnaryCallReceiver, @unchecked Sendable {
    // @unchecked Sendable: the mutable state is a LoopBound (checked on every access); the
    // rest is immutable and Sendable.
    let channel: GRPCChannel
    let prepared: PreparedCall
    let framed: [UInt8]
    let outcomes: Outcomes
    let polls: Int
    private var state: LoopBound<State>

    struct State {
      var started = 0
      var pending: [Int] = []
      var call: LoopCall?
    }

    init(channel: GRPCChannel, prepared: PreparedCall, framed: [UInt8], polls: Int,
         outcomes: Outcomes) {
      self.channel = channel
      self.prepared = prepared
      self.framed = framed
      self.polls = polls
      self.outcomes = outcomes
      state = LoopBound(State(), on: channel.eventLoop)
    }

    /// Arms the first poll; on the loop.
    func start() {
      _ = channel.eventLoop.scheduleTimer(at: .now, target: self)
    }

    func timerFired() {
      do {
        state.value.call = try channel.startUnary(prepared, framedRequest: framed, receiver: self)
        state.value.started += 1
      } catch {
        outcomes.seen.withLock { $0.errors.append(error) }
      }
    }

    func ended(_ result: Result<ReceivedMessage, RPCError>) {
      let onLoop = channel.eventLoop.inEventLoop
      let inTask = withUnsafeCurrentTask { $0 != nil }
      let size: Int
      switch result.flatMap({ $0.decoded(by: ProtoDeserializer<GRPCTesting.SimpleResponse>()) }) {
      case .success(let response): size = response.payload?.body.count ?? 0
      case .failure(let error):
        size = -1
        outcomes.seen.withLock { $0.errors.append(error) }
      }
      outcomes.seen.withLock { seen in
        if !onLoop { seen.offLoop += 1 }
        if inTask { seen.inTask += 1 }
      }
      if state.value.pending.isEmpty { channel.eventLoop.runAtEndOfTick(self) }
      state.value.pending.append(size)
      if state.value.started < polls {
        _ = channel.eventLoop.scheduleTimer(
          at: .now.advanced(by: .milliseconds(1)), target: self)
      }
    }

    func tickEnded() {
      let batch = state.value.pending
      state.value.pending = []
      let finished = state.value.started == polls
      outcomes.seen.withLock { seen in
        seen.sizes += batch
        seen.batches.append(batch.count)
        if finished && seen.sizes.count == polls { seen.done = true }
      }
    }
  }

  /// Runs `body` on `loop` and waits for it.
  static func onLoop<R: Sendable>(
    _ loop: EventLoop, _ body: @escaping @Sendable () throws(RPCError) -> R
  ) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
      loop.execute {
        do throws(RPCError) { continuation.resume(returning: try body()) } catch {
          continuation.resume(throwing: error)
        }
      }
    }
  }

  /// Waits until `done` holds, for at most 10 s.
  static func wait(_ outcomes: Outcomes, until done: @escaping (Outcomes.Seen) -> Bool)
    async throws
  {
    let deadline = ContinuousClock.now + .seconds(10)
    while !outcomes.seen.withLock({ done($0) }) {
      try #require(ContinuousClock.now < deadline, "the loop code did not finish within 10 s")
      try await Task.sleep(for: .milliseconds(5))
    }
  }

  @Test("a poller on the loop's timer: each answer once, on the loop, in no task, at tick end")
  func poller() async throws {
    let server = Self.makeServer()
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    var request = GRPCTesting.SimpleRequest()
    request.responseSize = 11
    var metadata = Metadata()
    metadata.add("x-poll", "yes")
    let prepared = try channel.prepare(
      Service.unaryCall, options: CallOptions(timeout: .seconds(5), metadata: metadata)
    ).laidOut()
    let outcomes = Outcomes()
    let poller = Poller(
      channel: channel, prepared: prepared, framed: GRPCChannel.frame(request), polls: 20,
      outcomes: outcomes)
    channel.eventLoop.execute { poller.start() }
    try await Self.wait(outcomes) { $0.done }
    let seen = outcomes.seen.withLock { $0 }
    #expect(seen.sizes == Array(repeating: 11, count: 20))
    #expect(seen.errors.isEmpty)
    #expect(seen.offLoop == 0)
    #expect(seen.inTask == 0)
    // One hand-over per tick that had an answer, and only then: the polls run one after
    // another (each armed 1 ms after the previous answer), so no tick has two answers.
    #expect(seen.batches == Array(repeating: 1, count: 20))
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("the server's error arrives as the call's RPCError, in the callback")
  func serverError() async throws {
    let server = Self.makeServer()
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    let request = GRPCTesting.SimpleRequest(responseSize: -1)
    let outcomes = Outcomes()
    _ = try await Self.onLoop(channel.eventLoop) { () throws(RPCError) in
      try channel.startUnary(Service.unaryCall, request, options: CallOptions()) { result in
        outcomes.seen.withLock { seen in
          switch result {
          case .success: seen.sizes.append(0)
          case .failure(let error): seen.errors.append(error)
          }
          seen.done = true
        }
      }
    }
    try await Self.wait(outcomes) { $0.done }
    let seen = outcomes.seen.withLock { $0 }
    #expect(seen.sizes.isEmpty)
    #expect(seen.errors.map(\.code) == [.invalidArgument])
    #expect(seen.errors.first?.message == "negative")
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("server streaming with a receiver: each response in order, then the end, on the loop")
  func serverStreaming() async throws {
    final class Receiver: ServerStreamReceiver {
      let loop: EventLoop
      let outcomes: Outcomes
      init(loop: EventLoop, outcomes: Outcomes) {
        self.loop = loop
        self.outcomes = outcomes
      }
      var deserializer: ProtoDeserializer<GRPCTesting.StreamingOutputCallResponse> {
        ProtoDeserializer()
      }
      func received(_ message: GRPCTesting.StreamingOutputCallResponse) {
        let onLoop = loop.inEventLoop
        outcomes.seen.withLock { seen in
          if !onLoop { seen.offLoop += 1 }
          seen.sizes.append(message.payload?.body.count ?? 0)
        }
      }
      func ended(_ error: RPCError?) {
        outcomes.seen.withLock { seen in
          if let error { seen.errors.append(error) }
          seen.done = true
        }
      }
    }
    let server = Self.makeServer()
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = (1...50).map {
      var parameters = GRPCTesting.ResponseParameters()
      parameters.size = Int32($0)
      return parameters
    }
    let outcomes = Outcomes()
    let prepared = try channel.prepare(Service.streamingOutputCall)
    _ = try await Self.onLoop(channel.eventLoop) { [request] () throws(RPCError) in
      try channel.startServerStreaming(
        Service.streamingOutputCall, request, prepared: prepared,
        receiver: Receiver(loop: channel.eventLoop, outcomes: outcomes))
    }
    try await Self.wait(outcomes) { $0.done }
    let seen = outcomes.seen.withLock { $0 }
    #expect(seen.sizes == Array(1...50))
    #expect(seen.errors.isEmpty)
    #expect(seen.offLoop == 0)
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("what makes a call impossible is thrown at its start, and nothing is sent")
  func refusedAtStart() async throws {
    let loop = EventLoop(name: "user-loop-calls")
    // Nothing listens on port 1: a call that got as far as connecting would fail UNAVAILABLE
    // in its callback, not at its start.
    let channel = GRPCChannel(host: "127.0.0.1", port: 1, eventLoop: loop)
    let request = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: 1))
    let expired = try channel.prepare(Service.unaryCall, options: CallOptions(timeout: .zero))
    var small = CallOptions()
    small.maxSendMessageSize = 1
    let limited = try channel.prepare(Service.unaryCall, options: small)
    func startError(_ prepared: PreparedCall) async throws -> RPCError? {
      try await Self.onLoop(loop) { () -> RPCError? in
        do throws(RPCError) {
          _ = try channel.startUnary(
            prepared, framedRequest: request, as: GRPCTesting.SimpleResponse.self
          ) { _ in }
          return nil
        } catch {
          return error
        }
      }
    }
    #expect(try await startError(expired)?.code == .deadlineExceeded)
    #expect(try await startError(limited)?.code == .resourceExhausted)
    var bad = Metadata()
    bad.add("Bad Name", "x")
    #expect(throws: RPCError.self) {
      try channel.prepare(Service.unaryCall, options: CallOptions(metadata: bad))
    }
    channel.close()
    #expect(try await startError(try channel.prepare(Service.unaryCall))?.code == .unavailable)
    loop.shutdown()
  }

  @Test("starting a loop-driven call off its loop stops the process, in every build")
  func offLoopStart() async {
    await #expect(processExitsWith: .failure) {
      let channel = GRPCChannel(host: "127.0.0.1", port: 1)
      // The test's own thread, not the channel's loop.
      _ = try? channel.startUnary(
        GRPCTesting.TestService.unaryCall, GRPCTesting.SimpleRequest(), options: CallOptions()
      ) { _ in }
    }
  }

  @Test("channels given one SharedConnections: a first connection takes no place, a second one does")
  func sharedConnections() async throws {
    var serverOptions = ServerOptions()
    // One stream per connection: a call beside one held open needs a second connection.
    serverOptions.maxConcurrentStreams = 1
    let server = Self.makeServer(options: serverOptions)
    let (entered, enter) = AsyncStream.makeStream(of: Void.self)
    let (gate, release) = AsyncStream.makeStream(of: Void.self)
    server.register(unary: Service.emptyCall) { _, _ in
      enter.yield()
      for await _ in gate { break }
      return GRPCTesting.Empty()
    }
    let port = try await server.start()
    let shared = SharedConnections(places: 3)
    var options = ChannelOptions()
    options.sharedConnections = shared
    let channels = (0..<2).map { _ in GRPCChannel(host: "127.0.0.1", port: port, options: options) }
    for channel in channels {
      let response = try await channel.unary(
        Service.unaryCall, GRPCTesting.SimpleRequest(responseSize: 2)
      ).message
      #expect(response.payload?.body.count == 2)
      // A channel's first connection is its own: no place is taken for it.
      #expect(shared.free == 3)
      let capacity = try await Self.onLoop(channel.eventLoop) { () -> Int? in
        channel.streamCapacity
      }
      // Its own connection and the 3 free places (not ChannelOptions.maxConnections' 8),
      // times the server's one stream each.
      #expect(capacity == 4)
    }
    // The first channel's connection is full while this call is held open: the next call
    // opens a second connection, which takes a place.
    let held = Task { try await channels[0].unary(Service.emptyCall, GRPCTesting.Empty()) }
    var handlers = entered.makeAsyncIterator()
    _ = await handlers.next()
    let response = try await channels[0].unary(
      Service.unaryCall, GRPCTesting.SimpleRequest(responseSize: 3)
    ).message
    #expect(response.payload?.body.count == 3)
    #expect(shared.free == 2)
    release.yield()
    _ = try await held.value
    for channel in channels { channel.close() }
    await server.shutdown(gracePeriod: .seconds(1))
  }
}

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
    let deadline = ContinuousClock.now + .seconds(10)
    while answers.seen.withLock({ $0.count }) < count {
      try #require(ContinuousClock.now < deadline, "the polls did not end within 10 s")
      try await Task.sleep(for: .milliseconds(5))
    }
    return answers
  }

  /// Runs `body` with a channel to a fresh test server whose interceptors `interceptors`
  /// makes for its loop and `log`; closes and stops both after it.
  static func withChannel(
    _ interceptors: (Log, EventLoop) -> [any ClientInterceptor],
    _ body: (GRPCChannel, Log) async throws -> Void
  ) async throws {
    let server = Calls.makeServer()
    let port = try await server.start()
    let log = Log()
    let loop = EventLoop(name: "user-interceptors")
    var options = ChannelOptions()
    options.interceptors = interceptors(log, loop)
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options, eventLoop: loop)
    do {
      try await body(channel, log)
    } catch {
      channel.close()
      loop.shutdown()
      await server.shutdown(gracePeriod: .seconds(1))
      throw error
    }
    channel.close()
    loop.shutdown()
    await server.shutdown(gracePeriod: .seconds(1))
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

  @Test("a response that does not decode ends the call INTERNAL for the interceptor too")
  func undecodable() async throws {
    struct Undecodable: Error {}
    struct Refusing: MessageDeserializer {
      func deserialize(_ message: ReceivedMessage) throws -> Int { throw Undecodable() }
    }
    try await Self.withChannel({ log, loop in [Stamping(log: log, loop: loop)] }) {
      channel, log in
      let prepared = try channel.prepare(Service.unaryCall, options: CallOptions())
      let framed = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: 3))
      let outcomes = Calls.Outcomes()
      _ = try await Calls.onLoop(channel.eventLoop) { () throws(RPCError) in
        try channel.startUnary(prepared, framedRequest: framed, deserializer: Refusing()) {
          result in
          outcomes.seen.withLock { seen in
            if case .failure(let error) = result { seen.errors.append(error) }
            seen.done = true
          }
        }
      }
      try await Calls.wait(outcomes) { $0.done }
      #expect(outcomes.seen.withLock { $0.errors.map(\.code) } == [.internalError])
      let entries = log.entries.withLock { $0 }
      #expect(entries.map(\.status) == [.internalError])
      #expect(entries.map(\.responses) == [1])
    }
  }

  /// A receiver of the user's own that decodes in its end, as a poller does, and tells the
  /// call the error its decoding gave: here every response fails to decode.
  final class OwnReceiver: UnaryCallReceiver {
    let outcomes = Calls.Outcomes()

    func ended(_ result: Result<ReceivedMessage, RPCError>) {
      ended(result) { _ in }
    }

    func ended(
      _ result: Result<ReceivedMessage, RPCError>, reporting report: (RPCError?) -> Void
    ) {
      let decoded = result.flatMap { _ -> Result<Int, RPCError> in
        .failure(RPCError(code: .internalError, message: "the response does not decode"))
      }
      if case .failure(let error) = decoded { report(error) } else { report(nil) }
      outcomes.seen.withLock { seen in
        if case .failure(let error) = decoded { seen.errors.append(error) }
        seen.done = true
      }
    }
  }

  @Test("a receiver of the user's own that decodes reports its decode error to the interceptors")
  func ownReceiverReports() async throws {
    try await Self.withChannel({ log, loop in [Stamping(log: log, loop: loop)] }) {
      channel, log in
      let prepared = try channel.prepare(Service.unaryCall, options: CallOptions())
      let framed = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: 3))
      let receiver = OwnReceiver()
      _ = try await Calls.onLoop(channel.eventLoop) { () throws(RPCError) in
        try channel.startUnary(prepared, framedRequest: framed, receiver: receiver)
      }
      try await Calls.wait(receiver.outcomes) { $0.done }
      #expect(receiver.outcomes.seen.withLock { $0.errors.map(\.code) } == [.internalError])
      let entries = log.entries.withLock { $0 }
      #expect(entries.map(\.status) == [.internalError])
      #expect(entries.map(\.responses) == [1])
    }
  }

  /// A receiver of the user's own that implements the reporting end but never reports.
  final class SilentReceiver: UnaryCallReceiver {
    let outcomes = Calls.Outcomes()

    func ended(_ result: Result<ReceivedMessage, RPCError>) {
      ended(result) { _ in }
    }

    func ended(
      _ result: Result<ReceivedMessage, RPCError>, reporting report: (RPCError?) -> Void
    ) {
      outcomes.seen.withLock { seen in
        if case .failure(let error) = result { seen.errors.append(error) }
        seen.done = true
      }
    }
  }

  @Test("a receiver that never reports: the interceptors still hear the call's own status")
  func silentReceiverReported() async throws {
    try await Self.withChannel({ log, loop in [Stamping(log: log, loop: loop)] }) {
      channel, log in
      let prepared = try channel.prepare(Service.unaryCall, options: CallOptions())
      // A negative size: the server answers INVALID_ARGUMENT.
      let framed = GRPCChannel.frame(GRPCTesting.SimpleRequest(responseSize: -1))
      let receiver = SilentReceiver()
      _ = try await Calls.onLoop(channel.eventLoop) { () throws(RPCError) in
        try channel.startUnary(prepared, framedRequest: framed, receiver: receiver)
      }
      try await Calls.wait(receiver.outcomes) { $0.done }
      #expect(receiver.outcomes.seen.withLock { $0.errors.map(\.code) } == [.invalidArgument])
      // Told on the loop right after the receiver returned: by the time a later job of the
      // loop runs.
      _ = try await Calls.onLoop(channel.eventLoop) { () throws(RPCError) in 0 }
      let entries = log.entries.withLock { $0 }
      #expect(entries.map(\.status) == [.invalidArgument])
      #expect(entries.map(\.responses) == [0])
      #expect(entries.map(\.onLoop) == [true])
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

extension GRPCTesting.SimpleRequest {
  init(responseSize: Int32) {
    self.init()
    self.responseSize = responseSize
  }
}
