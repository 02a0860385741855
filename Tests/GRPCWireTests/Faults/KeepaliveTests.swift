import Foundation
import GRPCWire
import PeerSupport
import Testing

/// A connection that goes silent after it was established (fault_blackhole_proxy.py drops
/// every byte both ways, closing nothing): only keepalive PINGs can tell, and they do within
/// interval + timeout; the next call goes over a new connection.
@Suite("Faults: keepalive on a black-holed connection", .serialized, .timeLimit(.minutes(2)))
struct KeepaliveTests {
  @Test("a hanging call on a black-holed connection ends UNAVAILABLE within interval + timeout")
  func blackHole() async throws {
    // grpcio's ping-abuse policy may answer PINGs every 200 ms on a call that sends no data
    // with a too_many_pings GOAWAY; turn it off, so that only the black hole ends the
    // connection.
    try await withPeerServer(
      "interop_server.py",
      arguments: [
        "--no-wire-events", "--grpc-arg", "grpc.http2.min_ping_interval_without_data_ms=10",
        "--grpc-arg", "grpc.http2.max_ping_strikes=0",
      ]
    ) { server in
      try await withPeerServer(
        "fault_blackhole_proxy.py", arguments: ["--target-port", "\(server.port)"]
      ) { proxy in
        let keepalive = ChannelOptions.Keepalive(
          interval: .milliseconds(200), timeout: .milliseconds(300))
        var options = ChannelOptions()
        options.backoff = .fast
        options.keepalive = keepalive
        let channel = GRPCChannel(host: "127.0.0.1", port: proxy.port, options: options)
        defer { channel.close() }
        let states = ConnectivityLog(channel)

        let hanging = Task { await channel.faultCall("hang", hang: true) }
        _ = try await server.waitForEvent("hanging") { $0["id"] == "hang" }
        // Before the black hole our PINGs are answered and the quiet call stays up: wait for
        // two answers. (grpcio sends PINGs of its own too, BDP probes, which we acknowledge:
        // only ACKs going to the client answer ours.)
        let isAnswer: @Sendable (PeerEvent) -> Bool = {
          $0["dir"] == "to_client" && $0["ack"] == "1"
        }
        let firstAnswer = try await proxy.waitForEvent("ping", where: isAnswer)
        let afterFirst = (proxy.lines.firstIndex(of: firstAnswer.line) ?? 0) + 1
        _ = try await proxy.waitForEvent("ping", from: afterFirst, where: isAnswer)
        let ours = proxy.events.filter {
          $0.kind == "ping" && $0["dir"] == "to_server" && $0["ack"] == "0"
        }
        print(
          "[faults] keepalive: before the black hole \(ours.count) PINGs went out, 2 were answered")
        let healthy = await channel.faultCall("while-hanging", timeout: .seconds(5))
        #expect(healthy.succeeded, "\(healthy)")

        let beforeBlackHole = states.count
        let blackHoledAt = ContinuousClock.now
        proxy.signal(SIGUSR1)
        let blackholed = try await proxy.waitForEvent("blackholed")
        #expect(blackholed["conns"] == "1", "\(blackholed)")

        let call = await hanging.value
        #expect(call.ended > blackHoledAt, "the call ended before the black hole: \(call)")
        let detected = blackHoledAt.duration(to: call.ended)
        let bound = keepalive.interval + keepalive.timeout + .milliseconds(500)
        print(
          "[faults] keepalive: \(call.id) ended \(detected.milliseconds) ms after the black "
            + "hole (interval \(keepalive.interval.milliseconds) ms + timeout "
            + "\(keepalive.timeout.milliseconds) ms; bound \(bound.milliseconds) ms): "
            + (call.error.map { "\($0.code) \($0.message)" } ?? "OK"))
        let error = try #require(call.error, "\(call)")
        #expect(error.code == .unavailable)
        #expect(error.isInterrupted)
        #expect(error.message.contains("keepalive PING"), "\(error.message)")
        #expect(detected <= bound)
        // The PING that went unanswered did reach the black hole.
        _ = try await proxy.waitForEvent("dropped") { $0["dir"] == "to_server" }

        // The next call opens a new connection, which forwards again.
        let next = await channel.faultCall("after", timeout: .seconds(5))
        #expect(next.succeeded, "\(next)")
        let opened = try await proxy.waitForEvent("connection_opened") { $0["conn"] == "2" }
        print(
          "[faults] keepalive: next call \(next); \(opened.line); states: "
            + states.timeline(from: beforeBlackHole, since: blackHoledAt))
        #expect(proxy.events.filter { $0.kind == "connection_opened" }.count == 2)
        try await states.wait(for: .ready, from: beforeBlackHole)
        // The proxy closed the server side once we gave up: grpcio saw the call cancelled.
        _ = try await server.waitForEvent("cancelled") { $0["id"] == "hang" }
      }
    }
  }
}
