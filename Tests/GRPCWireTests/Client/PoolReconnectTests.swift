import Testing

@testable import GRPCWire
import GRPCTestingProtos

/// The pool against a server that turns further connections away while one serves.
@Suite("Connection pool reconnects", .timeLimit(.minutes(1)))
struct PoolReconnectTests {
  typealias Service = GRPCTesting.TestService

  @Test("a call waiting for a stream reconnects at the backoff's pace, not in a tight loop, while the server refuses connections")
  func refusedExtraConnections() async throws {
    // One connection with one stream at the server; a long stream holds it. The channel may
    // open a second connection for the next call, but the server closes every further one
    // at once. Each failed attempt pauses opening for the backoff (1 s, then 1.6 s, …): in
    // the call's 2.5 s a handful of attempts, not one per loop tick.
    var options = ServerOptions()
    options.maxConnections = 1
    options.maxConcurrentStreams = 1
    try await ServerConnectionAgeTests.withHeldStreams(1, server: options, maxConnections: 2) {
      channel, _ in
      let error = await #expect(throws: RPCError.self) {
        _ = try await channel.unary(
          Service.emptyCall, GRPCTesting.Empty(),
          options: CallOptions(timeout: .milliseconds(2_500)))
      }
      #expect(
        error?.code == .deadlineExceeded || error?.code == .unavailable,
        "\(String(describing: error))")
      let opened = await channel.connectionsOpened()
      #expect(opened >= 2 && opened <= 6, "\(opened) connections opened in 2.5 s")
    }
  }
}
