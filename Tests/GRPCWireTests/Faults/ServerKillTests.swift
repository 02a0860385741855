import Foundation
import GRPCWire
import PeerSupport
import Testing

/// The server process dies (SIGKILL: no GOAWAY, the kernel closes its sockets) while calls
/// are in flight, and a new one is started on the same port: the calls in flight end with
/// UNAVAILABLE (interrupted), and the channel finds the new server within its backoff.
@Suite("Faults: server killed and restarted", .serialized, .timeLimit(.minutes(2)))
struct ServerKillTests {
  /// The deadline of the workers' calls (see below).
  static let workerTimeout: Duration = .seconds(40)

  @Test("calls in flight at SIGKILL end UNAVAILABLE; calls reconnect within the backoff bound")
  func killAndRestart() async throws {
    try await withRestartableServer("interop_server.py", arguments: ["--no-wire-events"]) {
      server in
      var options = ChannelOptions()
      options.backoff = .fast
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port, options: options)
      defer { channel.close() }
      let states = ConnectivityLog(channel)
      let warmUp = await channel.faultCall("warm-up")
      #expect(warmUp.succeeded, "\(warmUp)")
      try await states.wait(for: .ready)

      // Three workers call in a loop until told to stop: one with 500 ms calls, two with
      // quick ones. They wait for ready, so while the server is down they queue rather than
      // spin, and their first success after the restart shows when the channel is back. Their
      // deadline outlasts the longest outage the waits below allow (15 s for five failed
      // attempts, then a restart of up to 15 s plus the interpreter's start, which took 9 s
      // under load): a call queued through the whole outage is not what this test examines.
      let calls = Observed([FaultCall]())
      let stop = Observed(false)
      let workers = Task {
        await withTaskGroup(of: Void.self) { group in
          for worker in 0..<3 {
            group.addTask {
              var index = 0
              while !stop.value {
                index += 1
                let call = await channel.faultCall(
                  "loop-\(worker)-\(index)", delay: worker == 0 ? .milliseconds(500) : nil,
                  timeout: Self.workerTimeout, waitForReady: true)
                calls.update { $0.append(call) }
              }
            }
          }
        }
      }
      // A wait below that throws leaves the test early: the workers stop with it, instead of
      // calling the closed channel in a loop for the rest of the run.
      defer { stop.update { $0 = true } }
      // The loop runs on the first server for a while.
      try await calls.wait(for: "20 calls on the first server", timeout: .seconds(10)) {
        $0.filter(\.succeeded).count >= 20
      }

      // Calls certainly in flight at the kill: the server has started them, and they take 5 s.
      let first = server.current
      let fromLine = first.lines.count
      let probes = (0..<3).map { index in
        Task {
          await channel.faultCall("probe-\(index)", delay: .seconds(5), timeout: .seconds(10))
        }
      }
      for index in 0..<3 {
        _ = try await first.waitForEvent("started", from: fromLine) { $0["id"] == "probe-\(index)" }
      }
      let beforeKill = states.count
      let killedAt = ContinuousClock.now
      await server.kill()
      let connectionsAtKill = await channel.connectionsOpened()

      for probe in probes {
        let call = await probe.value
        let error = try #require(call.error, "\(call) succeeded, though its server was killed")
        #expect(error.code == .unavailable, "\(call)")
        #expect(error.isInterrupted, "\(call)")
        print(
          "[faults] kill: \(call.id) ended \(killedAt.duration(to: call.ended).milliseconds) ms "
            + "after SIGKILL: \(error.code) \(error.message)"
        )
      }
      // The server stays down until the channel has failed five attempts in a row (about
      // 1.6 s with this backoff), so that its backoff has grown to the 1 s maximum.
      try await states.history.wait(for: "five failed attempts", timeout: .seconds(15)) {
        $0.entries.dropFirst(beforeKill).filter { $0.state == .transientFailure }.count >= 5
      }

      let restartBegan = ContinuousClock.now
      let second = try await server.restart()
      let listening = ContinuousClock.now
      let connectionsAtRestart = await channel.connectionsOpened()
      let afterRestart = try await calls.wait(
        for: "a call to succeed after the restart", timeout: .seconds(15)
      ) { $0.contains { $0.succeeded && $0.ended > restartBegan } }
      let firstSuccess = afterRestart.filter { $0.succeeded && $0.ended > restartBegan }
        .min { $0.ended < $1.ended }!
      let (readyIndex, ready) = try await states.wait(for: .ready, from: beforeKill)
      let reconnect = max(.zero, listening.duration(to: firstSuccess.ended))
      let readyAfter = max(.zero, listening.duration(to: ready.at))
      let outage = killedAt.duration(to: listening)
      let bound = options.backoff.longestWait + .milliseconds(300)
      print(
        "[faults] kill: server down for \(outage.milliseconds) ms (SIGKILL → new server "
          + "listening); "
          + "READY \(readyAfter.milliseconds) ms and first successful call (\(firstSuccess.id)) "
          + "\(reconnect.milliseconds) ms after it listened; bound \(bound.milliseconds) ms "
          + "(backoff maximum \(options.backoff.maximum.milliseconds) ms + 20% jitter + 300 ms)")
      #expect(reconnect <= bound, "first success \(reconnect.milliseconds) ms after the restart")
      #expect(readyAfter <= bound)

      // Later calls all succeed, on the new server.
      let laterFrom = calls.value.count
      try await calls.wait(for: "20 more calls after the restart", timeout: .seconds(10)) {
        $0.count >= laterFrom + 20
      }
      stop.update { $0 = true }
      await workers.value
      let later = calls.value.filter { $0.started > firstSuccess.ended }
      #expect(!later.isEmpty)
      let laterFailures = later.filter { !$0.succeeded }
      #expect(laterFailures.isEmpty, "\(laterFailures)")
      let failures = calls.value.filter { !$0.succeeded }
      for call in failures {
        #expect(call.error?.code == .unavailable && call.error?.isInterrupted == true, "\(call)")
      }
      #expect(second.events.contains { $0.kind == "finished" && $0["code"] == "OK" })

      // READY before the kill, TRANSIENT_FAILURE while the server was gone, READY again.
      let history = states.history.value
      let failedAt = history.first(.transientFailure, from: beforeKill)?.index ?? .max
      #expect(failedAt < readyIndex, "\(history)")
      #expect(channel.connectivityState == .ready)
      let attempts = connectionsAtRestart - connectionsAtKill
      let allowed = options.backoff.mostAttempts(in: outage) + 2
      print(
        "[faults] kill: \(calls.value.count) loop calls, \(failures.count) failed (interrupted); "
          + "\(attempts) connection attempts while the server was down (backoff allows "
          + "\(allowed)); states since the kill: "
          + states.timeline(from: beforeKill, since: killedAt)
      )
      #expect(attempts <= allowed, "connection attempts while the server was down")
    }
  }
}
