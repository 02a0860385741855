import FleetConsumer
import Foundation
import PeerSupport
import Testing

/// `Tests/Python/fake_fleet_engine.py` running for a test or a suite: a grpcio Fleet Engine
/// trip service answering `GetTrip` from scripts the tests write, recording every request.
///
/// Scripts go into a directory the server reads on demand (`--script-dir`), so one server can
/// serve a whole suite: each test adds the trips it needs (with names of its own) and reads
/// back only their requests.
final class FakeFleetEngine: Sendable {
  let server: PeerServer
  let scriptDirectory: URL

  private init(server: PeerServer, scriptDirectory: URL) {
    self.server = server
    self.scriptDirectory = scriptDirectory
  }

  /// Starts a server; `quiet` leaves out the per-request EVENT lines (load tests);
  /// `jwtPublicKey` (a PEM file) makes it accept only consumer JWTs signed by that key
  /// (`--verify-jwt-public-key`: each request's `jwt=` says how its token fared).
  /// `maxConnectionAge` makes it GOAWAY each connection after about that long
  /// (`--max-connection-age-ms`), so clients keep connecting anew.
  static func start(
    quiet: Bool = false, jwtPublicKey: String? = nil, maxConnectionAge: Duration? = nil
  ) async throws -> FakeFleetEngine {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("fake-fleet-engine-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let server = try await PeerServer.start(
      "fake_fleet_engine.py",
      arguments: ["--script-dir", directory.path] + (quiet ? ["--quiet"] : [])
        + (jwtPublicKey.map { ["--verify-jwt-public-key", $0] } ?? [])
        + (maxConnectionAge.map {
          ["--max-connection-age-ms", "\(Int($0 / .milliseconds(1)))"]
        } ?? []))
    return FakeFleetEngine(server: server, scriptDirectory: directory)
  }

  /// Stops the server and removes its scripts.
  func stop() async {
    await server.stop()
    try? FileManager.default.removeItem(at: scriptDirectory)
  }

  var endpoint: TripService.Endpoint { TripService.Endpoint(host: "127.0.0.1", port: server.port) }

  /// Adds trips: each name with its `GetTrip` steps (see `FakeScript`) and, in `feeds`, its
  /// `WatchTrip` steps (a trip without them answers the feed UNIMPLEMENTED), optionally
  /// requiring a token.
  func add(
    _ trips: [String: [FakeScript.Step]], feeds: [String: [FakeScript.Step]] = [:],
    requireToken: String? = nil
  ) throws {
    var document: [String: Any] = [:]
    var scripts: [String: Any] = [:]
    for (name, steps) in trips {
      var script: [String: Any] = ["steps": steps.map(\.json)]
      if let feed = feeds[name] { script["feed"] = feed.map(\.json) }
      if let requireToken { script["requireToken"] = requireToken }
      scripts[name] = script
    }
    document["trips"] = scripts
    try write(document)
  }

  /// Adds a template: every trip whose name starts with `prefix` runs `steps`.
  func addTemplate(prefix: String, steps: [FakeScript.Step]) throws {
    try write(["templates": [["prefix": prefix, "steps": steps.map(\.json)]]])
  }

  private func write(_ document: [String: Any]) throws {
    let data = try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])
    // Written under a temporary name and renamed, so the server never reads half a file.
    let name = UUID().uuidString
    let temporary = scriptDirectory.appendingPathComponent("\(name).tmp")
    try data.write(to: temporary)
    try FileManager.default.moveItem(
      at: temporary, to: scriptDirectory.appendingPathComponent("\(name).json"))
  }

  // MARK: What reached the server

  /// Every `GetTrip` for `trip` read so far, in order. The server prints each request's
  /// line before answering it, but our reader may not have read it yet when the client has
  /// its answer: to count requests, use ``waitForRequests(_:for:timeout:)``.
  func requests(for trip: String) -> [GetTripRecord] {
    Self.requests(for: trip, in: server.lines)
  }

  private static func requests(for trip: String, in lines: [String]) -> [GetTripRecord] {
    lines.compactMap(PeerEvent.init).filter { $0.kind == "getTrip" && $0["trip"] == trip }
      .map(GetTripRecord.init)
  }

  /// Every `WatchTrip` stream for `trip` that has ended so far, in order (its `sent` and
  /// `answer` say how it went).
  func streams(for trip: String) -> [GetTripRecord] {
    server.events.filter { $0.kind == "watchTrip" && $0["trip"] == trip }.map(GetTripRecord.init)
  }

  /// Waits until at least `count` requests for `trip` were recorded; returns them all.
  @discardableResult
  func waitForRequests(
    _ count: Int, for trip: String, timeout: Duration = .seconds(10)
  ) async throws -> [GetTripRecord] {
    try await waitFor(count, "getTrip", of: trip, timeout: timeout)
  }

  /// Waits until at least `count` `WatchTrip` streams of `trip` have ended; returns them all.
  @discardableResult
  func waitForStreams(
    _ count: Int, for trip: String, timeout: Duration = .seconds(10)
  ) async throws -> [GetTripRecord] {
    try await waitFor(count, "watchTrip", of: trip, timeout: timeout)
  }

  private func waitFor(_ count: Int, _ kind: String, of trip: String, timeout: Duration)
    async throws -> [GetTripRecord]
  {
    let deadline = ContinuousClock.now + timeout
    while true {
      // One snapshot for both the count and where to wait from, so no line slips between.
      let lines = server.lines
      let found = lines.compactMap(PeerEvent.init)
        .filter { $0.kind == kind && $0["trip"] == trip }.map(GetTripRecord.init)
      if found.count >= count { return found }
      let remaining = deadline - ContinuousClock.now
      guard remaining > .zero else {
        throw FakeEngineTimeout(
          what: "\(count) \(kind) events for \(trip); got \(found.count)", lines: lines)
      }
      // The predicate runs under the server's lock: it must only look at its line.
      _ = try await server.waitForLine(from: lines.count, timeout: remaining, "\(kind) \(trip)") {
        line in line.hasPrefix("EVENT \(kind) ") && line.contains(" trip=\(trip) ")
      }
    }
  }

  /// The client connections seen so far (one EVENT line each).
  var connectionCount: Int {
    server.events.filter { $0.kind == "connection" }.count
  }

  /// When each client connection made its first call (the server's monotonic milliseconds).
  var connectionTimes: [Int] {
    server.events.filter { $0.kind == "connection" }.compactMap { $0["ms"].flatMap { Int($0) } }
  }
}

/// One `GetTrip` (or `WatchTrip`) as the fake server recorded it.
struct GetTripRecord: Sendable, CustomStringConvertible {
  var event: PeerEvent

  init(_ event: PeerEvent) {
    self.event = event
  }

  var view: String? { event["view"] }
  var routeFormat: String? { event["format"] }
  /// `current_route_segment_version` as `seconds.nanos`, nil when unset.
  var currentRouteSegmentVersion: String? { version("crsv") }
  var remainingWaypointsVersion: String? { version("rwv") }
  var trafficVersion: String? { version("trafficv") }
  var remainingWaypointsRouteVersion: String? { version("rwrv") }
  var regionCode: String? { event["region"] }
  var sdkType: String? { event["sdk"] }
  /// `OK` or the status code name the server answered with.
  var answer: String? { event["answer"] }
  /// When the call arrived, in the server's monotonic milliseconds.
  var arrivedMs: Int? { event["ms"].flatMap { Int($0) } }
  /// With `--verify-jwt-public-key`: `ok`, or why the server refused the token.
  var jwt: String? { event["jwt"] }
  /// For a `WatchTrip`: how many updates the server sent.
  var sent: Int? { event["sent"].flatMap { Int($0) } }
  var authorization: String? { event.header("authorization") }
  var requestParams: String? { event.header("x-goog-request-params") }

  private func version(_ key: String) -> String? {
    event[key] == "-" ? nil : event[key]
  }

  var description: String { event.line }
}

struct FakeEngineTimeout: Error, CustomStringConvertible {
  var what: String
  var lines: [String]
  var description: String {
    "timed out waiting for \(what); server lines:\n" + lines.suffix(30).joined(separator: "\n")
  }
}

/// A fake Fleet Engine started once for a whole suite (`.fakeFleetEngine`), published to its
/// tests in ``current``, stopped after the last one.
struct SharedFakeEngine: SuiteTrait, TestScoping {
  @TaskLocal static var current: FakeFleetEngine?

  /// The suite's server; fails the test when the suite lacks the trait.
  static func engine() throws -> FakeFleetEngine {
    try #require(current, "the suite needs the trait .fakeFleetEngine")
  }

  func scopeProvider(for test: Test, testCase: Test.Case?) -> SharedFakeEngine? {
    test.isSuite ? self : nil
  }

  func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    let engine = try await FakeFleetEngine.start()
    do {
      try await Self.$current.withValue(engine) { try await function() }
    } catch {
      await engine.stop()
      throw error
    }
    await engine.stop()
  }
}

extension Trait where Self == SharedFakeEngine {
  /// Starts one fake Fleet Engine for the suite; see ``SharedFakeEngine``.
  static var fakeFleetEngine: SharedFakeEngine { SharedFakeEngine() }
}
