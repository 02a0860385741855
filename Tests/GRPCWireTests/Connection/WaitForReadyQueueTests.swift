import GRPCTestingProtos
import PeerSupport
import Testing

@testable import GRPCWire

/// Calls with waitForReady wait in the pool while the channel backs off; those that end
/// meanwhile must not stay there.
@Suite("Calls waiting for a ready channel", .timeLimit(.minutes(1)))
struct WaitForReadyQueueTests {
  @Test("calls that time out while the channel backs off are let go, not held until it is ready")
  func endedCallsPruned() async throws {
    var options = ChannelOptions()
    // One refused attempt, then a backoff longer than the test: no retry prunes the queue.
    options.backoff.initial = .seconds(60)
    options.backoff.jitter = 0
    let channel = GRPCChannel(host: "127.0.0.1", port: try unusedPort(), options: options)
    defer { channel.close() }
    let calls = 1_000
    for _ in 0..<calls {
      let error = try await #require(throws: RPCError.self) {
        _ = try await channel.unary(
          TestService.emptyCall, GRPCTesting.Empty(),
          options: CallOptions(timeout: .milliseconds(1), waitForReady: true))
      }
      #expect(error.code == .deadlineExceeded || error.code == .unavailable, "\(error)")
    }
    #expect(channel.connectivityState == .transientFailure)
    let pool = channel.pool
    let held = await withCheckedContinuation { continuation in
      channel.eventLoop.execute { continuation.resume(returning: pool.value.callsWaitingForReady) }
    }
    // Pruned as the queue doubles: at most one round of ended calls, not all of them.
    #expect(held < 64, "\(held) of \(calls) ended calls still held")
  }

  /// The channel's one connection drains (its server shuts down, a call still open) and an
  /// attempt for a call that waits for ready is refused: the channel backs off. Then the
  /// draining connection closes, which sets the channel IDLE: the call must still start when
  /// the backoff ends, and reach the server that listens by then.
  @Test("a call waiting for ready starts when the backoff ends, its channel IDLE meanwhile")
  func waitingCallOutlivesReadyConnection() async throws {
    let started = Observed(false)
    let release = Observed(false)
    let first = GRPCServer()
    first.register(unary: TestService.emptyCall) { _, _ in GRPCTesting.Empty() }
    first.register(unary: TestService.unaryCall) { _, _ in
      started.update { $0 = true }
      try await release.wait(for: "the release of the slow call", timeout: .seconds(20)) { $0 }
      return GRPCTesting.SimpleResponse()
    }
    let port = try await first.start()
    var options = ChannelOptions()
    options.backoff.initial = .milliseconds(200)
    options.backoff.jitter = 0
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    defer { channel.close() }
    let states = ConnectivityLog(channel)
    _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
    let slow = Task { try await channel.unary(TestService.unaryCall, GRPCTesting.SimpleRequest()) }
    try await started.wait(for: "the slow call's handler", timeout: .seconds(10)) { $0 }
    // No longer listening; the connection drains while the slow call is open.
    let stopped = Task { await first.shutdown(gracePeriod: .seconds(20)) }
    let (draining, _) = try await states.wait(for: .idle, from: 1)

    let waiting = Task {
      try await channel.unary(
        TestService.emptyCall, GRPCTesting.Empty(),
        options: CallOptions(timeout: .seconds(20), waitForReady: true))
    }
    try await states.wait(for: .transientFailure, from: draining)
    release.update { $0 = true }
    _ = try await slow.value
    await stopped.value
    let second = GRPCServer()
    second.register(unary: TestService.emptyCall) { _, _ in GRPCTesting.Empty() }
    _ = try await second.start(port: port)
    let began = ContinuousClock.now
    let answered = await waiting.result
    #expect(throws: Never.self, "states: \(states.history.value)") { try answered.get() }
    // Well before its deadline: at the end of a backoff of at most a few hundred ms.
    #expect(began.duration(to: .now) < .seconds(5), "states: \(states.history.value)")
    await second.shutdown(gracePeriod: .seconds(1))
  }
}
