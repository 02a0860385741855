import FleetSync
import GRPCTestingProtos
import PeerSupport
import Testing

@testable import GRPCWire

/// A server on several event loops (`ServerOptions.eventLoops`): connections are handed to
/// the loops in turn, each connection's calls run on its own loop, and GOAWAY and shutdown
/// reach connections on every loop.
@Suite("Server on several event loops", .timeLimit(.minutes(1)))
struct ServerEventLoopsTests {
  typealias Service = GRPCTesting.TestService

  /// A server on `loops` loops (the first one `first`, when given) whose UnaryCall answers
  /// with the index, in the server's loops, of the loop its handler ran on (as `username`),
  /// and whose StreamingOutputCall sends one response per parameter, `interval_us` apart.
  func makeServer(loops: Int, first: EventLoop? = nil) -> GRPCServer {
    var options = ServerOptions()
    options.eventLoops = loops
    let server = GRPCServer(options: options, eventLoop: first)
    server.register(unary: Service.unaryCall) { [server] _, _ in
      var response = GRPCTesting.SimpleResponse()
      let index = server.loops.firstIndex { $0.inEventLoop }
      response.username = index.map { "\($0)" } ?? "none"
      return response
    }
    server.registerStreamingOutput()
    return server
  }

  /// The loop index the handler of a UnaryCall on `channel` ran on.
  func handlerLoop(_ channel: GRPCChannel) async throws -> String {
    try await channel.unary(Service.unaryCall, GRPCTesting.SimpleRequest()).message.username
  }

  /// A request for `count` responses, `interval` apart.
  func slowStream(count: Int, interval: Duration) -> GRPCTesting.StreamingOutputCallRequest {
    var request = GRPCTesting.StreamingOutputCallRequest()
    var parameters = GRPCTesting.ResponseParameters()
    parameters.size = 10
    parameters.intervalUs = Int32(interval.components.seconds * 1_000_000
      + interval.components.attoseconds / 1_000_000_000_000)
    request.responseParameters = Array(repeating: parameters, count: count)
    return request
  }

  @Test("connections go to the loops in turn; a connection's calls stay on its loop")
  func connectionsInTurn() async throws {
    let first = EventLoop(name: "test-accept")
    defer { first.shutdown() }
    let server = makeServer(loops: 3, first: first)
    #expect(server.loops.count == 3)
    #expect(server.loops[0] === first, "the given loop accepts and serves first")
    let port = try await server.start()
    var channels: [GRPCChannel] = []
    defer { for channel in channels { channel.close() } }
    var seen: [String] = []
    // One connection at a time, so the order of accepts is the order of the channels.
    for _ in 0..<4 {
      let channel = GRPCChannel(host: "127.0.0.1", port: port)
      channels.append(channel)
      seen.append(try await handlerLoop(channel))
    }
    #expect(seen == ["0", "1", "2", "0"])
    for (channel, loop) in zip(channels, seen) {
      for _ in 0..<3 {
        let again = try await handlerLoop(channel)
        #expect(again == loop, "a later call of the same connection ran on loop \(again)")
      }
    }
    await server.shutdown(gracePeriod: .seconds(1))
    // The given loop was not the server's to end: it still runs work.
    let stillRuns = await withCheckedContinuation { done in first.execute { done.resume(returning: true) } }
    #expect(stillRuns)
  }

  @Test("goAway reaches connections on every loop: their streams finish, new calls reconnect")
  func goAwayOnEveryLoop() async throws {
    let server = makeServer(loops: 3)
    let port = try await server.start()
    let channels = (0..<3).map { _ in GRPCChannel(host: "127.0.0.1", port: port) }
    defer { for channel in channels { channel.close() } }
    for channel in channels { _ = try await handlerLoop(channel) }
    let counts = try await withThrowingTaskGroup(of: Int.self) { group in
      for channel in channels {
        group.addTask {
          try await channel.serverStreaming(
            Service.streamingOutputCall, slowStream(count: 6, interval: .milliseconds(50))
          ) { responses in
            var count = 0
            for try await _ in responses { count += 1 }
            return count
          }
        }
      }
      try await Task.sleep(for: .milliseconds(100))
      server.goAway()
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(counts == [6, 6, 6], "streams in flight were cut: \(counts)")
    for channel in channels {
      _ = try await handlerLoop(channel)
      let opened = await channel.connectionsOpened()
      #expect(opened == 2, "the call after GOAWAY should use a second connection")
    }
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("shutdown ends calls on every loop after the grace period, and then returns")
  func shutdownEndsEveryLoop() async throws {
    let server = makeServer(loops: 3)
    let port = try await server.start()
    let channels = (0..<3).map { _ in GRPCChannel(host: "127.0.0.1", port: port) }
    defer { for channel in channels { channel.close() } }
    for channel in channels { _ = try await handlerLoop(channel) }
    let outcomes = PosixMutex<[String]>([])
    try await withThrowingTaskGroup(of: Void.self) { group in
      for channel in channels {
        group.addTask {
          do {
            _ = try await channel.serverStreaming(
              Service.streamingOutputCall, slowStream(count: 600, interval: .milliseconds(50))
            ) { responses in
              for try await _ in responses {}
            }
            outcomes.withLock { $0.append("OK") }
          } catch let error as RPCError {
            outcomes.withLock { $0.append(error.code.name) }
          }
        }
      }
      try await Task.sleep(for: .milliseconds(200))
      let clock = ContinuousClock()
      let start = clock.now
      await server.shutdown(gracePeriod: .milliseconds(300))
      let took = clock.now - start
      #expect(took >= .milliseconds(300) && took < .seconds(10), "shutdown took \(took)")
      try await group.waitForAll()
    }
    let ends = outcomes.withLock { $0 }
    #expect(ends.count == 3 && !ends.contains("OK"), "the 30 s streams ended \(ends)")
    // Nothing listens any more.
    let late = GRPCChannel(host: "127.0.0.1", port: port)
    defer { late.close() }
    await #expect(throws: RPCError.self) { _ = try await handlerLoop(late) }
  }

  @Test("below 1 loop counts as 1")
  func atLeastOneLoop() async throws {
    let server = makeServer(loops: 0)
    #expect(server.loops.count == 1)
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    #expect(try await handlerLoop(channel) == "0")
    await server.shutdown(gracePeriod: .seconds(1))
  }
}
