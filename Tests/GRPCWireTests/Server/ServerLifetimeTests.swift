import FleetSync
import GRPCTestingProtos
import PeerSupport
import Testing

@testable import GRPCWire

/// A server shut down and let go of frees its core (listener, handlers, connection table) and
/// the loops it made: nothing it stored holds it.
@Suite("Server lifetime", .timeLimit(.minutes(1)))
struct ServerLifetimeTests {
  /// A server on `loops` loops (the first `first`, when given), with a weak reference to its
  /// core in `core`, that has served one connection on each loop and been shut down while the
  /// last connection was open.
  func servedAndShutDown(
    loops: Int, first: EventLoop? = nil, core: WeakReferences<ServerCore>
  ) async throws -> GRPCServer {
    var options = ServerOptions()
    options.eventLoops = loops
    let server = GRPCServer(options: options, eventLoop: first)
    server.registerUnaryPayload()
    let port = try await server.start()
    let bound = server.core
    try #require(await bound.loop.answer(within: .seconds(10)) { core.add(bound.value) })
    // One connection after another: the server hands them to its loops in turn.
    var channels: [GRPCChannel] = []
    for _ in 0..<loops {
      if let last = channels.last { await last.close(gracePeriod: .seconds(5)) }
      let channel = GRPCChannel(host: "127.0.0.1", port: port)
      channels.append(channel)
      _ = try await channel.unary(GRPCTesting.TestService.unaryCall, GRPCTesting.SimpleRequest())
    }
    // The last connection is open, on the last loop: the core waits for it to close, with a
    // grace period long enough that nothing left waiting it out goes unnoticed.
    await server.shutdown(gracePeriod: .seconds(30))
    await channels.last?.close(gracePeriod: .seconds(5))
    return server
  }

  @Test("the core and the loops the server made are freed once it is shut down and dropped")
  func ownLoopsFreed() async throws {
    let core = WeakReferences<ServerCore>()
    let loops = WeakReferences<EventLoop>()
    do {
      let server = try await servedAndShutDown(loops: 2, core: core)
      for loop in server.loops { loops.add(loop) }
    }
    // Shut down, the server's loops have stopped and their threads ended (joined), and with
    // them whatever their queues and timers held: nothing frees anything later.
    #expect(core.count == 1 && loops.count == 2)
    #expect(core.alive == 0, "the server's core outlived it")
    #expect(loops.alive == 0, "\(loops.alive) of the loops the server made outlived it")
  }

  @Test("on a loop it was given, the core is freed once the server is shut down and dropped")
  func givenLoopCoreFreed() async throws {
    let first = EventLoop(name: "test-given")
    defer { first.shutdown() }
    let core = WeakReferences<ServerCore>()
    let ownLoops = WeakReferences<EventLoop>()
    do {
      // The second loop, the server's own, ends with the shutdown; the given one does not.
      let server = try await servedAndShutDown(loops: 2, first: first, core: core)
      #expect(server.loops.first === first)
      for loop in server.loops.dropFirst() { ownLoops.add(loop) }
    }
    #expect(ownLoops.count == 1)
    #expect(ownLoops.alive == 0, "the loop the server made outlived it")
    // The last release may come on the loop, from the work that resumed the shutdown; what the
    // loop runs next runs after that work is done. That it answers shows it still runs.
    let alive = try #require(await first.answer(within: .seconds(10)) { core.alive })
    #expect(core.count == 1)
    #expect(alive == 0, "the server's core outlived it")
  }

  /// Its loop stopped, the server has nothing left to run: a shutdown that waited for the loop
  /// to answer waited forever, a start never returned.
  @Test("shut down, a second shutdown returns and start throws FAILED_PRECONDITION")
  func afterShutdown() async throws {
    let server = GRPCServer()
    _ = try await server.start()
    await server.shutdown(gracePeriod: .seconds(1))
    await server.shutdown(gracePeriod: .seconds(1))
    let error = try await #require(throws: RPCError.self) { try await server.start() }
    #expect(error.code == .failedPrecondition, "\(error)")
  }

  @Test("a channel closed once closes again gracefully at once")
  func channelClosedTwice() async throws {
    let channel = GRPCChannel(host: "127.0.0.1", port: try unusedPort())
    await channel.close(gracePeriod: .seconds(1))
    await channel.close(gracePeriod: .seconds(1))
    #expect(channel.connectivityState == .shutdown)
  }
}

/// Weak references to objects of one type: how many of them are still alive, without keeping
/// any.
final class WeakReferences<Object: AnyObject>: Sendable {
  private struct Weak { weak var object: Object? }
  private let references = PosixMutex<[Weak]>([])

  func add(_ object: Object) {
    references.withLock { $0.append(Weak(object: object)) }
  }

  var count: Int { references.withLock { $0.count } }

  var alive: Int { references.withLock { $0.count { $0.object != nil } } }
}
