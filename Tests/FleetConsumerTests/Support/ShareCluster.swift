import FleetConsumer
import Foundation
import PeerSupport
import Testing

/// `scripts/share-cluster`: N `fleet-share` instances behind real HAProxy, against the Python
/// fake Fleet Engine, with `Tests/Python/cluster_viewers.py` watching through the balancer.
///
/// The trips run one template: step `i` puts the vehicle at latitude `52.4 + i / 10,000`, so
/// a viewer's events say which GetTrip answer they carry (``step(ofLatitude:)``).
final class ShareCluster: Sendable {
  static let admin = "cluster-admin"
  static let secret = "cluster link secret"

  let engine: FakeFleetEngine
  let cluster: ChildProcess
  let viewers: PeerServer
  let trips: [String]
  let pollInterval: Double
  let balancerPort: Int

  /// One `instance K pid PID listening on http://127.0.0.1:PORT` line.
  struct Instance: Sendable {
    let number: Int
    let pid: pid_t
    let port: Int
  }

  private init(
    engine: FakeFleetEngine, cluster: ChildProcess, viewers: PeerServer, trips: [String],
    pollInterval: Double, balancerPort: Int
  ) {
    (self.engine, self.cluster, self.viewers, self.trips) = (engine, cluster, viewers, trips)
    (self.pollInterval, self.balancerPort) = (pollInterval, balancerPort)
  }

  /// Starts `instances` instances behind HAProxy, `trips` trips, `links` links per trip and
  /// `viewers` viewers per trip; returns once every viewer has had a first event.
  ///
  /// With `tls` (a PEM file with certificate and key) HAProxy serves HTTPS with ALPN h2, and
  /// links are made on the first instance directly; `completing` trips end COMPLETE after 40
  /// steps instead of moving on.
  static func start(
    instances: Int, trips tripCount: Int, links: Int, viewers viewerCount: Int,
    pollInterval: Double = 0.5, drainSeconds: Double = 10, tls: String? = nil, completing: Bool = false
  ) async throws -> ShareCluster {
    let engine = try await FakeFleetEngine.start()
    // Fixed names and secret: which trip hashes to which instance is the same every run.
    let prefix = "providers/\(FleetTest.provider)/trips/\(completing ? "completing" : "cluster")-"
    try engine.addTemplate(prefix: prefix, steps: completing ? Array(steps().prefix(40)) + [.trip(["tripStatus": "COMPLETE"])] : steps())
    let trips = (1...tripCount).map { "\(prefix)\($0)" }
    var environment = ProcessInfo.processInfo.environment
    environment["FLEET_BIN_DIR"] = try ToolProcess.builtExecutable("fleet-share")
      .deletingLastPathComponent().path
    let cluster = try ChildProcess(
      PythonPeer.packageRoot.appendingPathComponent("scripts/share-cluster"),
      [
        "--instances", "\(instances)", "--port", "0",
      ] + (tls.map { ["--tls", $0] } ?? []) + [
        "--",
        "--endpoint", "127.0.0.1:\(engine.server.port)", "--plaintext",
        "--provider", FleetTest.provider, "--token", "t", "--admin-token", admin,
        "--link-secret", secret, "--poll-interval", "\(pollInterval)",
        "--drain-seconds", "\(drainSeconds)",
      ], name: "share-cluster", environment: environment)
    do {
      let balancer = try await cluster.waitForLine(timeout: .seconds(90), "the balancer's line") {
        $0.hasPrefix("balancer ")
      }
      let match = try #require(
        balancer.wholeMatch(of: /balancer pid ([0-9]+) listening on https?:\/\/127\.0\.0\.1:([0-9]+)/),
        "\(balancer)")
      let port = try #require(Int(match.2))
      let linkMaker = tls == nil ? port : try #require(Self.instances(in: cluster.lines).first).port
      let viewers = try await PeerServer.start(
        "cluster_viewers.py",
        arguments: ["http://127.0.0.1:\(linkMaker)", admin, "\(links)", "\(viewerCount)", "600"] + trips,
        startTimeout: .seconds(60))
      _ = try await viewers.waitForEvent("ready", timeout: .seconds(60))
      let running = ShareCluster(
        engine: engine, cluster: cluster, viewers: viewers, trips: trips,
        pollInterval: pollInterval, balancerPort: port)
      try await running.waitUntilEveryViewer(of: tripCount * viewerCount, hasDataAfter: 0, within: .seconds(60))
      return running
    } catch {
      await cluster.stop(grace: .seconds(20))
      await engine.stop()
      throw error
    }
  }

  /// Stops the viewers, the cluster (its instances drain) and the fake.
  func stop() async {
    await viewers.stop()
    await cluster.stop(grace: .seconds(20))
    await engine.stop()
  }

  static func steps() -> [FakeScript.Step] {
    (0..<2_000).map { step in
      .trip([
        "tripStatus": "ENROUTE_TO_PICKUP", "vehicleId": "vehicle-1",
        "lastLocation": ["location": FakeScript.point(52.4 + Double(step) / 10_000, 13.4)],
        "pickupPoint": FakeScript.location(52.5, 13.4),
        "dropoffPoint": FakeScript.location(52.52, 13.45),
      ])
    }
  }

  static func step(ofLatitude latitude: Double) -> Int {
    Int(((latitude - 52.4) * 10_000).rounded())
  }

  // MARK: What the cluster says

  /// The instances it has started, in order.
  var instances: [Instance] { Self.instances(in: cluster.lines) }

  private static func instances(in lines: [String]) -> [Instance] {
    lines.compactMap { line in
      guard let match = line.wholeMatch(of: /instance ([0-9]+) pid ([0-9]+) listening on http:\/\/127\.0\.0\.1:([0-9]+)/),
        let number = Int(match.1), let pid = pid_t(match.2), let port = Int(match.3)
      else { return nil }
      return Instance(number: number, pid: pid, port: port)
    }
  }

  /// `fleet_share_trips_followed` of the instance on `port`, from its `/metrics`.
  static func followedTrips(port: Int) async throws -> Int {
    let output = try await PythonPeer.run(
      "http_request.py", ["GET", "http://127.0.0.1:\(port)/metrics"], timeout: .seconds(30))
    let answer = try #require(
      try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any], "\(output.stderr)")
    let body = answer["body"] as? String ?? ""
    let line = try #require(
      body.split(separator: "\n").first { $0.hasPrefix("fleet_share_trips_followed{") },
      "no fleet_share_trips_followed in \(body)")
    return Int(try #require(Double(line.split(separator: " ").last ?? "")))
  }

  // MARK: What the fake and the viewers saw

  /// The GetTrips of a stretch of time, per trip.
  struct Window {
    /// How many (one follow makes `seconds / pollInterval`).
    var counts: [String: Int] = [:]
    /// The client connections (`peer`, one per instance) they came on.
    var peers: [String: Set<String>] = [:]
    /// The steps answered, in order.
    var steps: [String: [Int]] = [:]
  }

  /// The GetTrips made while `seconds` pass.
  func window(seconds: Double) async throws -> Window {
    let from = engine.server.lines.count
    try await Task.sleep(for: .seconds(seconds))
    let events = engine.server.lines.dropFirst(from).compactMap(PeerEvent.init).filter { $0.kind == "getTrip" }
    var window = Window()
    for event in events {
      guard let trip = event["trip"] else { continue }
      window.counts[trip, default: 0] += 1
      window.peers[trip, default: []].insert(event["peer"] ?? "?")
      if let step = Int(event["step"] ?? "") { window.steps[trip, default: []].append(step) }
    }
    return window
  }

  /// The viewers' events of `kind` (`data`, `status`, `end`).
  func viewerEvents(_ kind: String) -> [PeerEvent] {
    viewers.events.filter { $0.kind == kind }
  }

  /// Waits until each of the `count` viewers has had a data event later than `time` (Unix s).
  func waitUntilEveryViewer(of count: Int, hasDataAfter time: Double, within timeout: Duration) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
      let served = Set(viewerEvents("data").filter { Double($0["t"] ?? "") ?? 0 > time }.compactMap { $0["viewer"] })
      if served.count >= count { return }
      guard ContinuousClock.now < deadline else {
        Issue.record("only \(served.count) of \(count) viewers had an event after \(time) within \(timeout)")
        return
      }
      try await Task.sleep(for: .milliseconds(100))
    }
  }

  /// Checks that each trip was polled at one follow's rate (±20 %) in a window of `seconds`.
  func expectOneFollowPerTrip(_ counts: [String: Int], seconds: Double, _ when: String) {
    let expected = seconds / pollInterval
    let values = trips.map { counts[$0] ?? 0 }
    print("[cluster] \(when): GetTrips per trip in \(seconds) s: \(values.min() ?? 0)...\(values.max() ?? 0) (one follow: \(expected))")
    for trip in trips {
      let count = Double(counts[trip] ?? 0)
      #expect(
        count >= expected * 0.8 && count <= expected * 1.2,
        "\(when): \(trip) had \(Int(count)) GetTrips in \(seconds) s; one follow makes \(expected)")
    }
  }
}
