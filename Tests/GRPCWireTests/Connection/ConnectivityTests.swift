import GRPCTestingProtos
import GRPCWire
import PeerSupport
import Testing

/// A channel's connectivity states follow gRPC's: IDLE, CONNECTING, READY, TRANSIENT_FAILURE,
/// SHUTDOWN, observable as an AsyncSequence.
@Suite("Connectivity states", .timeLimit(.minutes(1)))
struct ConnectivityTests {
  @Test("idle until the first call, then connecting and ready, then shutdown on close")
  func lifecycle() async throws {
    try await withPeerServer("interop_server.py", arguments: ["--direct"]) { server in
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port)
      #expect(channel.connectivityState == .idle)
      let states = channel.connectivityStates
      let seen = Task {
        var seen: [ConnectivityState] = []
        for await state in states {
          seen.append(state)
          if state == .shutdown { break }
        }
        return seen
      }
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
      #expect(channel.connectivityState == .ready)
      channel.close()
      #expect(await seen.value == [.idle, .connecting, .ready, .shutdown])
    }
  }

  @Test("a refused connection puts the channel in transient failure; calls fail fast")
  func transientFailure() async throws {
    var options = ChannelOptions()
    options.backoff.initial = .seconds(30)
    let channel = GRPCChannel(host: "127.0.0.1", port: try unusedPort(), options: options)
    defer { channel.close() }
    let first = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
    }
    #expect(first.code == .unavailable)
    #expect(channel.connectivityState == .transientFailure)
    // During the (30 s) backoff a call fails at once, naming the failure and the state.
    let start = ContinuousClock.now
    let second = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
    }
    #expect(ContinuousClock.now - start < .seconds(1))
    #expect(second.message.contains("TRANSIENT_FAILURE"), "\(second.message)")
    #expect(second.message.contains("Connection refused"), "\(second.message)")
  }

  @Test("a waitForReady call waits out the backoff and succeeds once the server is up")
  func waitForReady() async throws {
    let port = try unusedPort()
    var options = ChannelOptions()
    options.backoff.initial = .milliseconds(200)
    options.backoff.maximum = .milliseconds(400)
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    defer { channel.close() }
    _ = try? await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
    #expect(channel.connectivityState == .transientFailure)
    let call = Task {
      try await channel.unary(
        TestService.emptyCall, GRPCTesting.Empty(),
        options: CallOptions(timeout: .seconds(20), waitForReady: true))
    }
    let server = try await PeerServer.start("interop_server.py", arguments: ["--direct", "--port", "\(port)"])
    defer { Task { await server.stop() } }
    _ = try await call.value
    #expect(channel.connectivityState == .ready)
  }
}
