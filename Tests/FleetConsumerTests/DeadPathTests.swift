import FleetConsumer
import Foundation
import PeerSupport
import Testing

/// Following through a network path that dies without a FIN or RST — packets dropped both
/// ways, every socket left open — and heals a minute later (issues 12 and 34). Between the followers
/// and `fleet-sim` sits fault_blackhole_proxy.py: SIGUSR2 takes the path down (open
/// connections stay dead for good, new ones are held until it is back), SIGHUP brings it back.
///
/// Four followers of one trip go through it at once, so the minute of darkness is spent once:
/// `fleet-follow --stream` and `fleet-follow` polling, with the default keepalive, and a
/// `TripModel` on the feed and a polling one, whose services set a shorter keepalive through
/// `TripService.Options.keepalive`.
@Suite("Dead network paths", .timeLimit(.minutes(3)))
struct DeadPathTests {
  static let trip = "providers/sim-provider/trips/trip-1"
  /// How long the path stays down: the scenario's length, not a wait for a result.
  static let blackout: Duration = .seconds(60)
  /// A streamed follower reports the dead connection within this, from the blackout.
  static let reportBound: Duration = .seconds(45)
  /// Every follower prints the next update within this, from the path coming back: backing
  /// off after network errors, they call as soon as their channel has a ready connection
  /// again (issue 34), not when their backoff (up to 12 poll intervals) ends.
  static let recoveryBound: Duration = .seconds(3)
  /// The models' keepalive.
  static let keepalive = try! TripService.Keepalive(interval: .seconds(5), timeout: .seconds(2))

  @Test("a 60 s black hole: UNAVAILABLE within 45 s, pollers fail, all update 3 s after healing")
  func blackHole() async throws {
    // The vehicle crawls at 0.5 km/h of simulated time, 60 times faster than real time: NEW
    // is over after 2 s, then it drives 8 m of real time a second for at least 2 minutes
    // (its route to the pickup is over 1 km), so every follower sees it move throughout.
    let simulator = try await PeerServer.startFleetSim(["--trips", "1", "--speed-kmh", "0.5"])
    defer { simulator.kill() }
    try await withPeerServer(
      "fault_blackhole_proxy.py", arguments: ["--target-port", "\(simulator.port)"]
    ) { proxy in
      let arguments = [
        "--endpoint", "127.0.0.1:\(proxy.port)", "--plaintext", "--trip-name", Self.trip,
        "--token", "sim:trip-1", "--poll-interval", "1", "--json", "--max-seconds", "170",
      ]
      try await withTool("fleet-follow", arguments + ["--stream"]) { streamed in
        try await withTool("fleet-follow", arguments) { polled in
          let feedService = try Self.service(port: proxy.port, feed: true)
          defer { feedService.shutdown() }
          let pollService = try Self.service(port: proxy.port, feed: false)
          defer { pollService.shutdown() }
          let followers: [ScenarioFollower] = [
            .tool("fleet-follow --stream", streams: true, streamed),
            .tool("fleet-follow", streams: false, polled),
            try .model("TripModel on the feed", streams: true, feedService, trip: Self.trip),
            try .model("polling TripModel", streams: false, pollService, trip: Self.trip),
          ]
          try await run(followers, proxy)
        }
      }
    }
  }

  private func run(_ followers: [ScenarioFollower], _ proxy: PeerServer) async throws {
    for follower in followers {
      try await follower.waitUntilMoving(until: .now + .seconds(30))
    }

    let downMarks = followers.map(\.mark)
    let (down, wentDown) = try await Self.send(SIGUSR2, to: proxy, awaiting: "path_down")
    let failures = try await Self.concurrently(followers) { index, follower in
      try await follower.waitForFailure(from: downMarks[index], until: wentDown + Self.reportBound)
    }
    for (follower, failure) in zip(followers, failures) {
      print(
        "[dead path] \(follower.name): \(failure.status) (\(failure.category)) "
          + "\(wentDown.duration(to: failure.at)) after the blackout: \(failure.message)")
      #expect(failure.category == "serverOrNetwork", "\(follower.name): \(failure)")
      if follower.streams {
        #expect(failure.status == "UNAVAILABLE", "\(follower.name): \(failure)")
        #expect(failure.message.contains("PING"), "\(follower.name): \(failure)")
      }
    }
    // The models' keepalive (5 s + 2 s) is what ended the feed's stream, not the default one.
    let feedReport = wentDown.duration(to: failures[2].at)
    #expect(feedReport <= Self.keepalive.interval + Self.keepalive.timeout + .seconds(3))

    try await Task.sleep(until: wentDown + Self.blackout)
    let upMarks = followers.map(\.mark)
    for (index, follower) in followers.enumerated() {
      let reported = follower.failures(from: downMarks[index], to: upMarks[index])
      print("[dead path] \(follower.name) while down:\n  " + reported.joined(separator: "\n  "))
      #expect(
        follower.updates(from: failures[index].mark, to: upMarks[index]) == 0,
        "\(follower.name) had an update while the path was down")
    }
    let (up, cameBack) = try await Self.send(SIGHUP, to: proxy, awaiting: "path_up")
    let recovered = try await Self.concurrently(followers) { index, follower in
      try await follower.waitForUpdate(from: upMarks[index], until: cameBack + Self.recoveryBound)
    }
    for (follower, at) in zip(followers, recovered) {
      print("[dead path] \(follower.name): next update \(cameBack.duration(to: at)) after healing")
    }
    let connections = proxy.events.filter {
      ["connection_opened", "connection_held"].contains($0.kind)
    }
    print(
      "[dead path] \(down.line); \(up.line); connections: "
        + connections.map { "\($0.kind == "connection_held" ? "held" : "opened") \($0["conn"]!)" }
        .joined(separator: ", "))
  }

  /// Sends `signal` to the proxy and waits for the event saying it took effect; returns the
  /// event and when it was seen.
  private static func send(_ signal: Int32, to proxy: PeerServer, awaiting kind: String)
    async throws -> (PeerEvent, ContinuousClock.Instant)
  {
    let from = proxy.lines.count
    proxy.signal(signal)
    let event = try await proxy.waitForEvent(kind, from: from)
    return (event, .now)
  }

  /// A service on the proxy at `port` with the models' keepalive and 1 s polls.
  private static func service(port: Int, feed: Bool) throws -> TripService {
    var options = TripService.Options()
    options.followsTripFeed = feed
    options.pollInterval = .seconds(1)
    options.callTimeout = .seconds(5)
    // The default retry policy (1 s × 1.6ⁿ, up to 60 s): by the end of the blackout the
    // backoff is far past the 3 s the recovery is allowed.
    options.keepalive = keepalive
    return try TripService(
      configuration: .init(
        endpoint: .init(host: "127.0.0.1", port: port), transportSecurity: .plaintext,
        providerID: "sim-provider",
        accessTokenProvider: FixedAccessTokenProvider(AccessToken("sim:trip-1")),
        options: options))
  }

  /// `body` for every follower at once; its results in the followers' order.
  private static func concurrently<T: Sendable>(
    _ followers: [ScenarioFollower],
    _ body: @escaping @Sendable (Int, ScenarioFollower) async throws -> T
  ) async throws -> [T] {
    try await withThrowingTaskGroup(of: (Int, T).self) { group in
      for (index, follower) in followers.enumerated() {
        group.addTask { (index, try await body(index, follower)) }
      }
      var results: [Int: T] = [:]
      for try await (index, result) in group { results[index] = result }
      return followers.indices.map { results[$0]! }
    }
  }
}
