import Foundation
import PeerSupport
import Testing

@testable import GRPCWire

/// When keepalive PINGs go out, as gRPC's client keepalive design (A8) asks: only while a call
/// is open unless `permitWithoutCalls`, and half as often after a server's `too_many_pings`
/// GOAWAY. fault_blackhole_proxy.py, forwarding all the while, reports every PING and GOAWAY
/// that passes.
@Suite("Faults: keepalive policy (A8)", .serialized, .timeLimit(.minutes(2)))
struct KeepalivePolicyTests {
  @Test("an idle connection sends no PINGs; with permitWithoutCalls it does")
  func noPingsWhileIdle() async throws {
    // Let grpcio take idle PINGs, so that only our policy decides what is sent.
    try await withPeerServer(
      "interop_server.py",
      arguments: [
        "--no-wire-events", "--grpc-arg", "grpc.keepalive_permit_without_calls=1",
        "--grpc-arg", "grpc.http2.min_ping_interval_without_data_ms=10",
        "--grpc-arg", "grpc.http2.max_ping_strikes=0",
      ]
    ) { server in
      try await withPeerServer(
        "fault_blackhole_proxy.py", arguments: ["--target-port", "\(server.port)"]
      ) { proxy in
        var idleOptions = ChannelOptions()
        idleOptions.keepalive = .init(interval: .milliseconds(250), timeout: .seconds(2))
        var pingingOptions = idleOptions
        pingingOptions.keepalive?.permitWithoutCalls = true
        let idle = GRPCChannel(host: "127.0.0.1", port: proxy.port, options: idleOptions)
        defer { idle.close() }
        let pinging = GRPCChannel(host: "127.0.0.1", port: proxy.port, options: pingingOptions)
        defer { pinging.close() }

        // Connection 1 is the idle channel's, 2 the pinging one's; both go quiet after a call.
        let first = await idle.faultCall("idle")
        #expect(first.succeeded, "\(first)")
        _ = try await proxy.waitForEvent("connection_opened") { $0["conn"] == "1" }
        let idleSince = proxy.lines.count
        let second = await pinging.faultCall("pinging")
        #expect(second.succeeded, "\(second)")
        _ = try await proxy.waitForEvent("connection_opened") { $0["conn"] == "2" }

        // Three answered PINGs of connection 2 with no call open: ≥ 750 ms in which connection
        // 1 would have sent two or more, had it pinged while idle.
        var from = proxy.lines.count
        for _ in 1...3 {
          let answer = try await proxy.waitForEvent("ping", from: from) {
            $0["conn"] == "2" && $0["dir"] == "to_client" && $0["ack"] == "1"
          }
          from = (proxy.lines.lastIndex(of: answer.line) ?? from) + 1
        }
        // PINGs the client started; an ACK answers one of the server's (grpcio PINGs to
        // measure bandwidth after a response) and is not the client's keepalive.
        let idlePings = proxy.events(from: idleSince).filter {
          $0.kind == "ping" && $0["conn"] == "1" && $0["dir"] == "to_server" && $0["ack"] != "1"
        }
        print(
          "[faults] keepalive policy: while 3 idle PINGs of permitWithoutCalls were answered, "
            + "the idle connection sent \(idlePings.count)")
        #expect(idlePings.isEmpty, "\(idlePings.map(\.line))")
      }
    }
  }

  @Test("a too_many_pings GOAWAY doubles the keepalive interval of the next connection")
  func tooManyPingsDoublesTheInterval() async throws {
    // grpcio's default ping policy: a PING less than 5 minutes after the last one, with no
    // data sent in between, is a strike; after 2 strikes it sends GOAWAY(ENHANCE_YOUR_CALM,
    // "too_many_pings") and closes the connection.
    try await withPeerServer("interop_server.py", arguments: ["--no-wire-events"]) { server in
      try await withPeerServer(
        "fault_blackhole_proxy.py", arguments: ["--target-port", "\(server.port)"]
      ) { proxy in
        var options = ChannelOptions()
        options.backoff = .fast
        options.keepalive = .init(interval: .milliseconds(200), timeout: .seconds(2))
        let channel = GRPCChannel(host: "127.0.0.1", port: proxy.port, options: options)
        defer { channel.close() }

        let first = Task { await channel.faultCall("first", hang: true) }
        let goAway = try await proxy.waitForEvent("goaway") {
          $0["conn"] == "1" && $0["dir"] == "to_client"
        }
        #expect(goAway["code"] == "ENHANCE_YOUR_CALM", "\(goAway.line)")
        #expect(goAway["debug"] == "too_many_pings", "\(goAway.line)")
        let ended = await first.value
        #expect(ended.error?.code == .unavailable, "\(ended)")
        #expect(await channel.keepaliveIntervalInForce() == .milliseconds(400))

        // The next connection pings every 400 ms: measured between its first two PINGs, by
        // the proxy's clock.
        let second = Task { await channel.faultCall("second", hang: true) }
        defer { second.cancel() }
        let isOurs: @Sendable (PeerEvent) -> Bool = {
          $0["conn"] == "2" && $0["dir"] == "to_server" && $0["ack"] == "0"
        }
        let ping1 = try await proxy.waitForEvent("ping", where: isOurs)
        let after1 = (proxy.lines.lastIndex(of: ping1.line) ?? 0) + 1
        let ping2 = try await proxy.waitForEvent("ping", from: after1, where: isOurs)
        let spacing = try #require(Int(ping2["ms"] ?? "")) - (try #require(Int(ping1["ms"] ?? "")))
        let before = proxy.events.filter {
          $0.kind == "ping" && $0["conn"] == "1" && $0["dir"] == "to_server" && $0["ack"] == "0"
        }.compactMap { Int($0["ms"] ?? "") }
        print(
          "[faults] keepalive policy: \(goAway.line); PINGs of connection 1 at \(before) ms, "
            + "of connection 2 \(spacing) ms apart")
        // 400 ms, less what the proxy's reading of the first PING may have been late by.
        #expect(spacing >= 350, "connection 2 pinged \(spacing) ms apart")
      }
    }
  }
}

extension PeerServer {
  /// The EVENT lines printed at index `from` of `lines` or later.
  func events(from index: Int) -> [PeerEvent] {
    lines.dropFirst(index).compactMap(PeerEvent.init)
  }
}

extension GRPCChannel {
  /// The keepalive interval the channel's connections use now (after any doubling), read on
  /// its loop.
  func keepaliveIntervalInForce() async -> Duration? {
    let pool = self.pool
    return await withCheckedContinuation { continuation in
      loop.execute { continuation.resume(returning: pool.value.keepaliveInterval) }
    }
  }
}
