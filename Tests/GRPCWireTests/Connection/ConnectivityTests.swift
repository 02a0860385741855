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
    let channel = try await Self.refusedChannel(port: try unusedPort(), backoff: .seconds(30))
    defer { channel.close() }
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
    let channel = try await Self.refusedChannel(port: port)
    defer { channel.close() }
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

  @Test("whenReady connects an idle channel with no call made and runs once it is ready")
  func whenReadyFromIdle() async throws {
    try await withPeerServer("interop_server.py", arguments: ["--direct"]) { server in
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port)
      defer { channel.close() }
      #expect(channel.connectivityState == .idle)
      let (ready, signal) = AsyncStream.makeStream(of: ConnectivityState.self)
      channel.whenReady { signal.yield(channel.connectivityState) }
      let state = try await first("READY", of: ready, within: .seconds(10))
      #expect(state == .ready)
    }
  }

  @Test("whenReady after a refused connection keeps reconnecting until the server is up")
  func whenReadyAfterFailure() async throws {
    let port = try unusedPort()
    let channel = try await Self.refusedChannel(port: port)
    defer { channel.close() }
    let (ready, signal) = AsyncStream.makeStream(of: ConnectivityState.self)
    channel.whenReady { signal.yield(channel.connectivityState) }
    // Several backoffs pass with no call and no server: the channel goes on trying.
    let failures = Task {
      var count = 0
      for await state in channel.connectivityStates where state == .transientFailure {
        count += 1
        if count == 3 { return }
      }
    }
    try await withTimeLimit("three failures", .seconds(10)) { await failures.value }
    let server = try await PeerServer.start(
      "interop_server.py", arguments: ["--direct", "--port", "\(port)"])
    defer { Task { await server.stop() } }
    let state = try await first("READY", of: ready, within: .seconds(20))
    #expect(state == .ready)
  }

  /// A channel to `port`, where nothing listens, after its first call failed UNAVAILABLE: it
  /// went into TRANSIENT_FAILURE, backing off `backoff` (at most twice that) between attempts.
  ///
  /// The state is read from the channel's state stream, not from `connectivityState` once the
  /// call has failed: when no call waits, the backoff's end puts the channel back to IDLE, and
  /// on a loaded machine the failed call's task may resume only after that.
  private static func refusedChannel(
    port: Int, backoff: Duration = .milliseconds(200)
  ) async throws -> GRPCChannel {
    var options = ChannelOptions()
    options.backoff.initial = backoff
    options.backoff.maximum = backoff * 2
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    let states = channel.connectivityStates
    let failed = try await #require(throws: RPCError.self) {
      _ = try await channel.unary(TestService.emptyCall, GRPCTesting.Empty())
    }
    #expect(failed.code == .unavailable, "\(failed)")
    let seen = try await withTimeLimit("TRANSIENT_FAILURE", .seconds(10)) {
      var seen: [ConnectivityState] = []
      for await state in states {
        seen.append(state)
        if state == .transientFailure { break }
      }
      return seen
    }
    #expect(seen == [.idle, .connecting, .transientFailure])
    return channel
  }
}
