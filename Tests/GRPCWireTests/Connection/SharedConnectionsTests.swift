import FleetSync
import GRPCTestingProtos
import Testing

@testable import GRPCWire

/// Connections shared between channels (`ChannelOptions.sharedConnections`, as a
/// TripService's event loops share its most connections): each channel may open its first,
/// the rest take places from the budget and give them back as they close.
@Suite("Connections shared between channels", .timeLimit(.minutes(1)))
struct SharedConnectionsTests {
  typealias Service = GRPCTesting.TestService

  @Test("a place is taken while one is free, and given back with a wake-up for the waiting")
  func places() {
    let shared = SharedConnections(places: 1)
    let wakes = PosixMutex(0)
    shared.wake(ObjectIdentifier(SharedConnectionsTests.self)) { wakes.withLock { $0 += 1 } }
    #expect(shared.take())
    #expect(!shared.take())
    #expect(shared.free == 0)
    shared.giveBack()
    #expect(shared.free == 1)
    #expect(wakes.withLock { $0 } == 1)
    shared.stopWaking(ObjectIdentifier(SharedConnectionsTests.self))
    #expect(shared.take())
    shared.giveBack()
    #expect(wakes.withLock { $0 } == 1)
    #expect(SharedConnections(places: -3).free == 0)
  }

  @Test(
    "a second connection takes the shared place; another channel's call waits for it, then opens one when it comes back"
  )
  func acrossChannels() async throws {
    var serverOptions = ServerOptions()
    serverOptions.maxConcurrentStreams = 1
    let server = ServerConnectionAgeTests.makeServer(serverOptions)
    let port = try await server.start()
    let shared = SharedConnections(places: 1)
    var options = ChannelOptions()
    options.maxConnections = 4
    options.sharedConnections = shared
    let first = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    let second = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    defer { second.close() }
    let held = Observed(0)
    try await withThrowingTaskGroup(of: Void.self) { group in
      // Two streams on the first channel (one per connection, the server allows one), one
      // on the second: the first channel's second connection holds the only place.
      for channel in [first, first, second] {
        group.addTask {
          _ = try? await channel.serverStreaming(
            Service.streamingOutputCall,
            ServerConnectionAgeTests.slowStream(responses: 40, every: .milliseconds(250))
          ) { responses in
            var counted = false
            for try await _ in responses where !counted {
              counted = true
              held.update { $0 += 1 }
            }
          }
        }
      }
      try await held.wait(for: "a response on each held stream", timeout: .seconds(20)) {
        $0 >= 3
      }
      #expect(await first.connectionsOpened() == 2)
      #expect(await second.connectionsOpened() == 1)
      #expect(shared.free == 0)

      // A call on the second channel finds its connection full and no place free: it waits.
      let answered = Observed(false)
      let waiting = try await withCheckedThrowingContinuation { continuation in
        second.eventLoop.execute {
          do {
            _ = try second.startUnary(
              Service.emptyCall, GRPCTesting.Empty(), options: CallOptions()
            ) { result in
              if case .success = result { answered.update { $0 = true } }
            }
            continuation.resume(returning: second.pool.value.callsWaitingForStream)
          } catch {
            continuation.resume(throwing: error)
          }
        }
      }
      #expect(waiting == 1)
      #expect(await second.connectionsOpened() == 1)

      // The first channel closes: its place comes back, and the waiting call opens the
      // second channel's second connection.
      first.close()
      try await answered.wait(for: "the waiting call's answer", timeout: .seconds(20)) { $0 }
      #expect(await second.connectionsOpened() == 2)
      group.cancelAll()
    }
    await server.shutdown(gracePeriod: .milliseconds(100))
  }
}
