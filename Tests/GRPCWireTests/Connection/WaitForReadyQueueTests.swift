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
}
