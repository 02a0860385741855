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
    try await wait(outcomes.seen, until: done)
  }

  /// Waits until `done` holds for what `state` holds, at most 10 s (then fails, saying what
  /// did not happen).
  static func wait<Value>(
    _ state: PosixMutex<Value>, _ what: String = "the loop code did not finish",
    until done: (Value) -> Bool
  ) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while !state.withLock({ done($0) }) {
      try #require(ContinuousClock.now < deadline, "\(what) within 10 s")
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
    // The handler entered, waited for at most 10 s.
    let inHandler = PosixMutex(false)
    let handlerEntered = Task {
      var handlers = entered.makeAsyncIterator()
      if await handlers.next() != nil { inHandler.withLock { $0 = true } }
    }
    try await Self.wait(inHandler, "the held call's handler was not entered") { $0 }
    await handlerEntered.value
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

extension GRPCTesting.SimpleRequest {
  init(responseSize: Int32) {
    self.init()
    self.responseSize = responseSize
  }
}
