import Foundation
import GRPCWire
import PeerSupport
import Testing

/// `close(gracePeriod:)` on a channel with calls in flight: they may finish within the grace
/// period, later ones are cancelled (RST_STREAM), new calls fail at once, and afterwards the
/// channel holds no thread and no connection (``ChannelResources``: only what the channel
/// owns is counted, so other suites may run at the same time).
@Suite("Faults: graceful client close", .serialized, .timeLimit(.minutes(2)))
struct ClientCloseTests {
  @Test("close(gracePeriod: 2 s) lets 500 ms calls finish; a call after close is UNAVAILABLE")
  func graceLetsCallsFinish() async throws {
    try await withPeerServer("interop_server.py", arguments: ["--no-wire-events"]) { server in
      try await Self.useAndClose(server: server) { channel in
        let slow = (0..<4).map { index in
          Task { await channel.faultCall("slow-\(index)", delay: .milliseconds(500)) }
        }
        for index in 0..<4 {
          _ = try await server.waitForEvent("started") { $0["id"] == "slow-\(index)" }
        }
        let closeBegan = ContinuousClock.now
        // Task.immediate runs close up to its first suspension before returning: the
        // channel refuses new calls from here on.
        let closing = Task.immediate { await channel.close(gracePeriod: .seconds(2)) }
        let late = await channel.faultCall("after-close")
        let error = try #require(late.error, "a call made after close began: \(late)")
        #expect(error.code == .unavailable, "\(late)")
        #expect(error.message.contains("closed"), "\(error.message)")
        for call in await slow.asyncMap({ await $0.value }) {
          #expect(call.succeeded, "a call in flight when close began: \(call)")
        }
        await closing.value
        let took = closeBegan.duration(to: .now)
        print(
          "[faults] close(gracePeriod: 2 s): returned after \(took.milliseconds) ms, once the "
            + "4 calls of 500 ms had finished; the call after close: \(error.code) "
            + error.message)
        #expect(took < .seconds(2), "close waited for the whole grace period")
        // The server saw our GOAWAY (a clean close), and no call was reset.
        _ = try await server.waitForEvent("goaway") { $0["from"] == "client" }
        #expect(!server.events.contains { $0.kind == "rst_stream" }, "\(server.events)")
      }
    }
  }

  @Test("close(gracePeriod: 100 ms) cancels a hanging call: CANCELLED, RST_STREAM to the server")
  func graceCancelsHangingCall() async throws {
    try await withPeerServer("interop_server.py", arguments: ["--no-wire-events"]) { server in
      try await Self.useAndClose(server: server) { channel in
        let hanging = Task { await channel.faultCall("hang", hang: true) }
        _ = try await server.waitForEvent("hanging") { $0["id"] == "hang" }
        let closeBegan = ContinuousClock.now
        await channel.close(gracePeriod: .milliseconds(100))
        let took = closeBegan.duration(to: .now)
        let call = await hanging.value
        print(
          "[faults] close(gracePeriod: 100 ms): returned after \(took.milliseconds) ms; "
            + "hanging call: \(call)")
        let error = try #require(call.error, "\(call)")
        #expect(error.code == .cancelled, "\(error)")
        #expect(took >= .milliseconds(100))
        #expect(took < .seconds(1))
        // The server's handler sees the call cancelled, and the relay saw our RST_STREAM
        // (CANCEL) for it before the connection closed.
        _ = try await server.waitForEvent("cancelled") { $0["id"] == "hang" }
        _ = try await server.waitForEvent("connection_closed")
        let reset = server.events.first { $0.kind == "rst_stream" && $0["from"] == "client" }
        #expect(reset?["code"] == "CANCEL", "no RST_STREAM(CANCEL) from us: \(server.lines)")
      }
    }
  }

  /// Creates a channel, runs `body` (which closes it), then checks that the channel is
  /// SHUTDOWN, that its loop thread has ended and that no socket of this process is
  /// connected to the server any more.
  private static func useAndClose(
    server: PeerServer, _ body: (GRPCChannel) async throws -> Void
  ) async throws {
    var options = ChannelOptions()
    options.backoff = .fast
    let channel = GRPCChannel(host: "127.0.0.1", port: server.port, options: options)
    let states = ConnectivityLog(channel)
    let warmUp = await channel.faultCall("warm-up")
    #expect(warmUp.succeeded, "\(warmUp)")
    let during = await ChannelResources.of(channel, port: server.port)
    // The measure sees what the channel holds: its named loop thread and its connection.
    #expect(during.loopThreadName == "grpc-127.0.0.1", "\(during)")
    #expect(!during.sockets.isEmpty, "\(during)")
    do {
      try await body(channel)
    } catch {
      channel.close()
      throw error
    }
    #expect(channel.connectivityState == .shutdown)
    try await states.waitForEnd()
    #expect(states.history.value.states.last == .shutdown, "\(states.history.value)")

    let after = ChannelResources.now(loopThread: during.loopThread, port: server.port)
    print("[faults] resources: with the channel \(during); after close \(after)")
    #expect(after.loopThreadName == nil, "the loop thread outlived close: \(after)")
    #expect(after.sockets.isEmpty, "sockets left open: \(after)")
  }
}
