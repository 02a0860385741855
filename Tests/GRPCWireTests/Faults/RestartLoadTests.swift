import Foundation
import GRPCWire
import PeerSupport
import Testing

/// 10,000 unary calls from 20 concurrent workers while the server is restarted three times
/// (killed, drained with GOAWAY, killed): every call ends, each either OK or with a
/// server/network status, and the counts add up to exactly 10,000.
@Suite("Faults: 10,000 calls across three server restarts", .serialized, .timeLimit(.minutes(2)))
struct RestartLoadTests {
  static let totalCalls = 10_000
  static let workers = 20

  /// How the server goes down at each quarter of the run.
  enum Restart: String, CaseIterable {
    case kill = "SIGKILL"
    case drain = "SIGTERM, GOAWAY and a 1 s grace period"
  }

  static let restarts: [Restart] = [.kill, .drain, .kill]

  @Test("10,000 calls, three restarts: each call OK or server/network, none hangs or goes missing")
  func tenThousandCalls() async throws {
    try await withRestartableServer(
      "interop_server.py", arguments: ["--direct", "--no-wire-events", "--shutdown-grace", "1"]
    ) { server in
      var options = ChannelOptions()
      options.backoff = .fast
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port, options: options)
      defer { channel.close() }
      let began = ContinuousClock.now

      // Calls wait for ready with a 5 s timeout: while a server restarts they queue (and
      // some may time out); nothing can hang longer than that.
      let issued = Observed(0)
      let ended = Observed([FaultCall]())
      let load = Task {
        try await withTimeLimit("10,000 calls", .seconds(50)) {
          await withTaskGroup(of: Void.self) { group in
            for worker in 0..<Self.workers {
              group.addTask {
                while true {
                  let number = issued.update {
                    $0 += 1
                    return $0
                  }
                  guard number <= Self.totalCalls else { return }
                  let call = await channel.faultCall(
                    "w\(worker)-\(number)", timeout: .seconds(5), waitForReady: true)
                  ended.update { $0.append(call) }
                }
              }
            }
          }
        }
      }

      var downtimes: [String] = []
      for (index, restart) in Self.restarts.enumerated() {
        let mark = Self.totalCalls * (index + 1) / (Self.restarts.count + 1)
        try await ended.wait(for: "\(mark) calls to end", timeout: .seconds(30)) {
          $0.count >= mark
        }
        let down = ContinuousClock.now
        switch restart {
        case .kill:
          await server.kill()
        case .drain:
          let old = server.current
          let from = old.lines.count
          server.terminate()
          _ = try await old.waitForEvent("draining", from: from)
        }
        let attemptsBefore = await channel.connectionsOpened()
        try await server.restart()
        let up = ContinuousClock.now
        let attempts = await channel.connectionsOpened() - attemptsBefore
        let firstOK = try await ended.wait(
          for: "a call to succeed after restart \(index + 1)", timeout: .seconds(15)
        ) { $0.contains { $0.succeeded && $0.ended > up } }
        let back = firstOK.filter { $0.succeeded && $0.ended > up }.map(\.ended).min()!
        downtimes.append(
          "restart \(index + 1) (\(restart.rawValue)) at call \(mark): new server listening "
            + "\(down.duration(to: up).milliseconds) ms later, first success "
            + "\(up.duration(to: back).milliseconds) ms after that; \(attempts) connection "
            + "attempts while it was down")
      }
      try await load.value
      let elapsed = began.duration(to: .now)

      let calls = ended.value
      let succeeded = calls.filter(\.succeeded).count
      let failures = calls.compactMap(\.error)
      var byCode: [String: Int] = ["OK": succeeded]
      var examples: [String: String] = [:]
      for error in failures {
        let key = "\(error.code)\(error.isInterrupted ? " (interrupted)" : "")"
        byCode[key, default: 0] += 1
        examples[key] = examples[key] ?? error.message
      }
      // The ids of the calls the servers' handlers started (printed before any response).
      let started = Set(
        server.all.flatMap { process in
          process.events.filter { $0.kind == "started" }.compactMap { $0["id"] }
        })
      for line in downtimes { print("[faults] 10k: \(line)") }
      for (key, message) in examples.sorted(by: { $0.key < $1.key }) {
        print("[faults] 10k: e.g. \(key): \(message)")
      }
      print(
        "[faults] 10k: \(calls.count) calls in \(elapsed.milliseconds) ms by \(Self.workers) "
          + "workers: \(succeeded) succeeded + \(failures.count) failed; by code: "
          + byCode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
          .joined(separator: ", ")
          + "; the servers started \(started.count) calls; the channel opened "
          + "\(await channel.connectionsOpened()) connections")

      #expect(calls.count == Self.totalCalls)
      #expect(succeeded + failures.count == Self.totalCalls)
      #expect(Set(calls.map(\.id)).count == Self.totalCalls, "a call was counted twice")
      // Only failures a caller recovers from by retrying: an interrupted connection, or the
      // codes of a server or network problem (FleetConsumer's category serverOrNetwork).
      let transient: Set<StatusCode> = [.unavailable, .deadlineExceeded, .aborted, .cancelled]
      let unexpected = failures.filter { !$0.isInterrupted && !transient.contains($0.code) }
      #expect(unexpected.isEmpty, "\(unexpected.prefix(5))")
      let slowest = calls.map(\.duration).max() ?? .zero
      #expect(slowest <= .seconds(6), "a call took \(slowest.milliseconds) ms")
      // Every success the client counted is a call a server's handler ran.
      let unseen = calls.filter { $0.succeeded && !started.contains($0.id) }
      #expect(unseen.isEmpty, "successes no server started: \(unseen.prefix(5))")
      #expect(elapsed < .seconds(60))
    }
  }
}
