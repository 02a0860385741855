import Foundation
import PeerSupport
import Testing

@testable import GRPCWire

/// A call whose deadline passes on a connection that has received nothing for a keepalive
/// timeout gets the connection probed with a PING at once: unanswered, the connection is
/// closed and the next calls go to a new one; answered, it stays. The keepalive interval is
/// a minute here, so every PING seen is the probe.
@Suite(
  "Faults: a PING after a deadline on a quiet connection", .serialized, .timeLimit(.minutes(2)))
struct DeadlineProbeTests {
  private static let keepalive = ChannelOptions.Keepalive(
    interval: .seconds(60), timeout: .milliseconds(500))

  /// Runs `body` with interop_server.py behind fault_blackhole_proxy.py and a channel to the
  /// proxy whose first call went through (on connection 1).
  private func withConnectedChannel(
    _ body: (_ proxy: PeerServer, _ channel: GRPCChannel) async throws -> Void
  ) async throws {
    // No BDP PINGs from grpcio: the probe needs a connection on which nothing arrives for
    // a keepalive timeout before the deadline, and grpcio times its own PINGs.
    try await withPeerServer(
      "interop_server.py", arguments: ["--no-wire-events", "--grpc-arg", "grpc.http2.bdp_probe=0"]
    ) { server in
      try await withPeerServer(
        "fault_blackhole_proxy.py", arguments: ["--target-port", "\(server.port)"]
      ) { proxy in
        var options = ChannelOptions()
        options.backoff = .fast
        options.keepalive = Self.keepalive
        let channel = GRPCChannel(host: "127.0.0.1", port: proxy.port, options: options)
        defer { channel.close() }
        let before = await channel.faultCall("before", timeout: .seconds(5))
        try #require(before.succeeded, "\(before)")
        try await body(proxy, channel)
      }
    }
  }

  @Test("on a black-holed connection: closed one keepalive timeout after the deadline, replaced")
  func blackHoled() async throws {
    try await withConnectedChannel { proxy, channel in

      proxy.signal(SIGUSR1)
      #expect(try await proxy.waitForEvent("blackholed")["conns"] == "1")
      // A call with no deadline that only the connection's end can end, and one that times
      // out: without the probe the first would hang for the keepalive interval.
      let bystander = Task { await channel.faultCall("bystander", hang: true) }
      let late = await channel.faultCall("late", timeout: .seconds(1))
      #expect(late.error?.code == .deadlineExceeded, "\(late)")
      let ended = await bystander.value
      let error = try #require(ended.error, "\(ended)")
      print(
        "[faults] probe: \(late); the bystander ended "
          + "\(late.ended.duration(to: ended.ended).milliseconds) ms after that deadline: "
          + "\(error.code) \(error.message)")
      #expect(error.code == .unavailable)
      #expect(error.isInterrupted)
      #expect(error.message.contains("deadline passed"), "\(error.message)")
      #expect(error.message.contains("PING"), "\(error.message)")
      #expect(ended.ended >= late.ended)
      #expect(late.ended.duration(to: ended.ended) <= Self.keepalive.timeout + .milliseconds(500))

      // New calls go to a new connection, which forwards.
      let after = await channel.faultCall("after", timeout: .seconds(5))
      #expect(after.succeeded, "\(after)")
      _ = try await proxy.waitForEvent("connection_opened") { $0["conn"] == "2" }
      #expect(await channel.connectionsOpened() == 2)
    }
  }

  @Test("on a live connection to a slow server: the PING is answered and the connection kept")
  func slowServer() async throws {
    try await withConnectedChannel { proxy, channel in
      let states = ConnectivityLog(channel)
      let beforeProbe = proxy.lines.count

      let slow = await channel.faultCall("slow", hang: true, timeout: .seconds(1))
      #expect(slow.error?.code == .deadlineExceeded, "\(slow)")
      let probe = try await proxy.waitForEvent("ping", from: beforeProbe) {
        $0["dir"] == "to_server" && $0["ack"] == "0"
      }
      let answer = try await proxy.waitForEvent("ping", from: beforeProbe) {
        $0["dir"] == "to_client" && $0["ack"] == "1"
      }
      print("[faults] probe: \(slow); \(probe.line); \(answer.line)")

      // Longer than the probe's timeout has passed once this call is done, and the
      // connection still carries it.
      let after = await channel.faultCall(
        "after", delay: Self.keepalive.timeout + .milliseconds(200), timeout: .seconds(5))
      #expect(after.succeeded, "\(after)")
      #expect(await channel.connectionsOpened() == 1)
      #expect(proxy.events.filter { $0.kind == "connection_opened" }.count == 1)
      #expect(!states.history.value.states.contains(.idle), "\(states.history.value)")
    }
  }
}
