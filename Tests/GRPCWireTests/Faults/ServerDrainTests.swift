import Foundation
import GRPCWire
import PeerSupport
import Testing

/// The server shuts down gracefully (grpcio's `stop(grace)`: GOAWAY, calls in flight may
/// finish) and a new one starts on the same port: nothing in flight fails, and calls made
/// after the GOAWAY go to the new server, never to the draining connection.
@Suite("Faults: server drains with GOAWAY and restarts", .serialized, .timeLimit(.minutes(2)))
struct ServerDrainTests {
  @Test("calls in flight finish during the server's grace period; new calls reach the new server")
  func drainAndRestart() async throws {
    try await withRestartableServer(
      "interop_server.py", arguments: ["--no-wire-events", "--shutdown-grace", "6"]
    ) { server in
      var options = ChannelOptions()
      options.backoff = .fast
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port, options: options)
      defer { channel.close() }
      let states = ConnectivityLog(channel)
      let warmUp = await channel.faultCall("warm-up")
      #expect(warmUp.succeeded, "\(warmUp)")

      let first = server.current
      let from = first.lines.count
      let slow = (0..<4).map { index in
        Task { await channel.faultCall("slow-\(index)", delay: .seconds(3), timeout: .seconds(15)) }
      }
      for index in 0..<4 {
        _ = try await first.waitForEvent("started", from: from) { $0["id"] == "slow-\(index)" }
      }

      let beforeGoAway = states.count
      let terminatedAt = ContinuousClock.now
      server.terminate()
      let draining = try await first.waitForEvent("draining", from: from)
      let goAway = try await first.waitForEvent("goaway", from: from) { $0["from"] == "server" }
      // The channel's only connection is draining: it is no longer READY.
      let (_, idle) = try await states.wait(for: .idle, from: beforeGoAway)
      print(
        "[faults] drain: \(goAway.line); the channel left READY "
          + "\(terminatedAt.duration(to: idle.at).milliseconds) ms after SIGTERM "
          + "(\(draining.line))")
      let attemptsAtGoAway = await channel.connectionsOpened()

      // New calls, made after the GOAWAY while nothing listens on the port: they wait for
      // the channel to be ready again.
      let newCalls = (0..<4).map { index in
        Task { await channel.faultCall("new-\(index)", timeout: .seconds(15), waitForReady: true) }
      }
      let second = try await server.restart()
      let listening = ContinuousClock.now
      let attemptsAtRestart = await channel.connectionsOpened()

      for call in await newCalls.asyncMap({ await $0.value }) {
        #expect(call.succeeded, "\(call)")
        print(
          "[faults] drain: \(call.id) ended "
            + "\(max(.zero, listening.duration(to: call.ended)).milliseconds) ms after the new "
            + "server listened: "
            + (call.error.map { "\($0.code) \($0.message)" } ?? "OK"))
      }
      for call in await slow.asyncMap({ await $0.value }) {
        #expect(call.succeeded, "a call in flight during the drain failed: \(call)")
        print(
          "[faults] drain: \(call.id) (3 s, in flight at SIGTERM) ended "
            + "\(terminatedAt.duration(to: call.ended).milliseconds) ms after SIGTERM: "
            + (call.error.map { "\($0.code) \($0.message)" } ?? "OK"))
      }

      // The slow calls finished on the first server; the new ones ran on the second only.
      for index in 0..<4 {
        _ = try await first.waitForEvent("finished", from: from) {
          $0["id"] == "slow-\(index)" && $0["code"] == "OK"
        }
        _ = try await second.waitForEvent("started") { $0["id"] == "new-\(index)" }
      }
      let misrouted = first.events.filter {
        $0.kind == "started" && $0["id"]?.hasPrefix("new-") == true
      }
      #expect(misrouted.isEmpty, "new calls reached the draining server: \(misrouted)")
      let firstExit = await first.stop(grace: .seconds(10))
      #expect(firstExit == .exited(0), "the drained server ended with \(firstExit)")

      // While the port was closed the channel retried with backoff, not in a tight loop.
      let outage = terminatedAt.duration(to: listening)
      let attempts = attemptsAtRestart - attemptsAtGoAway
      let allowed = options.backoff.mostAttempts(in: outage) + 2
      print(
        "[faults] drain: port closed for \(outage.milliseconds) ms; \(attempts) connection "
          + "attempts meanwhile (backoff allows \(allowed)); states: "
          + states.timeline(from: beforeGoAway, since: terminatedAt))
      #expect(attempts <= allowed, "connection attempts while the server was restarting")
      #expect(channel.connectivityState == .ready)
    }
  }

  @Test("while the only connection drains and nothing listens, a call fails fast UNAVAILABLE")
  func failFastWhileDraining() async throws {
    try await withPeerServer(
      "interop_server.py", arguments: ["--no-wire-events", "--shutdown-grace", "6"]
    ) { server in
      var options = ChannelOptions()
      options.backoff = .fast
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port, options: options)
      defer { channel.close() }
      let states = ConnectivityLog(channel)
      let warmUp = await channel.faultCall("warm-up")
      #expect(warmUp.succeeded, "\(warmUp)")
      let slow = Task {
        await channel.faultCall("slow", delay: .seconds(3), timeout: .seconds(15))
      }
      _ = try await server.waitForEvent("started") { $0["id"] == "slow" }
      let beforeGoAway = states.count
      server.signal(SIGTERM)
      _ = try await server.waitForEvent("draining")
      try await states.wait(for: .idle, from: beforeGoAway)
      let attemptsBefore = await channel.connectionsOpened()

      // No server will listen again: the attempt is refused, and a call that does not wait
      // for ready fails with UNAVAILABLE at once (its 2 s timeout only bounds a hang).
      let call = await channel.faultCall("fail-fast", timeout: .seconds(2))
      let attempts = await channel.connectionsOpened() - attemptsBefore
      print(
        "[faults] drain, fail fast: \(call); \(attempts) connection attempts; states: "
          + states.timeline(from: beforeGoAway, since: call.started))
      let error = try #require(call.error, "\(call)")
      #expect(error.code == .unavailable, "\(call)")
      #expect(call.duration < .seconds(1), "\(call)")
      #expect(attempts <= 2, "connection attempts for one fail-fast call")
      let slowCall = await slow.value
      #expect(slowCall.succeeded, "\(slowCall)")
    }
  }
}
