import Foundation
import PeerSupport
import Testing

/// `fleet-follow --json` run as a process against the fake Fleet Engine, held to the issue's
/// contract: the exact lines, the exit status, and what reached the server.
@Suite("fleet-follow as a black box", .fakeFleetEngine)
struct FleetFollowTests {
  /// `fleet-follow --endpoint … --plaintext --trip-name <name> --token … --json` plus `extra`.
  private func follow(
    _ engine: FakeFleetEngine, _ name: String, token: [String] = ["--token", "test-token"],
    _ extra: [String] = [], pollInterval: String = "0.1"
  ) async throws -> FleetFollowProcess.Result {
    try await FleetFollowProcess.run(
      ["--endpoint", "127.0.0.1:\(engine.server.port)", "--plaintext", "--trip-name", name]
        + token + ["--poll-interval", pollInterval, "--json"] + extra)
  }

  @Test("a full lifecycle prints exactly the contract's lines and exits 0 after COMPLETE")
  func lifecycle() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: Lifecycle.steps(tripName: name)])
    let result = try await follow(engine, name)
    #expect(result.status == 0, "\(result)")
    let s = Lifecycle.start
    #expect(
      result.lines == [
        #"{"event":"trip","fields":["tripStatus","pickupLocation","dropoffLocation","#
          + #""pickupETA","dropoffETA"]}"#,
        #"{"event":"tripStatus","status":"NEW"}"#,
        #"{"event":"pickupLocation","lat":52.5,"lng":13.4}"#,
        #"{"event":"dropoffLocation","lat":52.52,"lng":13.45}"#,
        #"{"event":"pickupETA","seconds":\#(s + 600)}"#,
        #"{"event":"dropoffETA","seconds":\#(s + 1800)}"#,
        #"{"event":"trip","fields":["tripStatus","remainingDistance","activeRoute","#
          + #""vehicleLocation","pickupETA","remainingWaypoints","vehicleID"]}"#,
        #"{"event":"tripStatus","status":"ENROUTE_TO_PICKUP"}"#,
        #"{"event":"remainingDistance","meters":2000}"#,
        #"{"event":"activeRoute","points":3}"#,
        #"{"event":"vehicleLocation","lat":52.49,"lng":13.38}"#,
        #"{"event":"pickupETA","seconds":\#(s + 500)}"#,
        #"{"event":"remainingWaypoints","count":2}"#,
        #"{"event":"vehicleID","id":"vehicle-1"}"#,
        #"{"event":"trip","fields":["remainingDistance","vehicleLocation","pickupETA"]}"#,
        #"{"event":"remainingDistance","meters":900}"#,
        #"{"event":"vehicleLocation","lat":52.495,"lng":13.39}"#,
        #"{"event":"pickupETA","seconds":\#(s + 400)}"#,
        #"{"event":"trip","fields":["tripStatus","remainingDistance","vehicleLocation"]}"#,
        #"{"event":"tripStatus","status":"ARRIVED_AT_PICKUP"}"#,
        #"{"event":"remainingDistance","meters":0}"#,
        #"{"event":"vehicleLocation","lat":52.5,"lng":13.4}"#,
        #"{"event":"trip","fields":["tripStatus","remainingDistance","activeRoute","#
          + #""vehicleLocation","dropoffETA","remainingWaypoints","remainingRouteDistance"]}"#,
        #"{"event":"tripStatus","status":"ENROUTE_TO_DROPOFF"}"#,
        #"{"event":"remainingDistance","meters":3000}"#,
        #"{"event":"activeRoute","points":4}"#,
        #"{"event":"vehicleLocation","lat":52.505,"lng":13.42}"#,
        #"{"event":"dropoffETA","seconds":\#(s + 1500)}"#,
        #"{"event":"remainingWaypoints","count":1}"#,
        #"{"event":"remainingRouteDistance","meters":0}"#,
        #"{"event":"trip","fields":["tripStatus","vehicleLocation","remainingWaypoints"]}"#,
        #"{"event":"tripStatus","status":"COMPLETE"}"#,
        #"{"event":"vehicleLocation","lat":52.52,"lng":13.45}"#,
        #"{"event":"remainingWaypoints","count":0}"#,
      ])
    let requests = try await engine.waitForRequests(6, for: name)
    #expect(requests.count == 6, "no GetTrip after COMPLETE")
    #expect(requests.allSatisfy { $0.authorization == "Bearer test-token" })
    #expect(
      requests.allSatisfy { $0.requestParams == "provider_id=providers/\(FleetTest.provider)" })
    #expect(requests[2].currentRouteSegmentVersion == "\(s + 10).000000000")
  }

  @Test("UNAVAILABLE and DEADLINE_EXCEEDED: one error line each, then recovery")
  func transientErrors() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([
      name: [
        .trip(["tripStatus": "NEW"]), .error("UNAVAILABLE", "the backend is restarting"),
        .error("DEADLINE_EXCEEDED", "too slow, \"really\""),
        .trip(["tripStatus": "ENROUTE_TO_PICKUP"]), .trip(["tripStatus": "COMPLETE"]),
      ]
    ])
    let result = try await follow(engine, name)
    #expect(result.status == 0, "\(result)")
    try checkContract(result)
    #expect(
      result.lines == [
        #"{"event":"trip","fields":["tripStatus"]}"#, #"{"event":"tripStatus","status":"NEW"}"#,
        #"{"event":"error","domain":"io.grpc","code":14,"status":"UNAVAILABLE","#
          + #""category":"serverOrNetwork","message":"the backend is restarting"}"#,
        #"{"event":"error","domain":"io.grpc","code":4,"status":"DEADLINE_EXCEEDED","#
          + #""category":"serverOrNetwork","message":"too slow, \"really\""}"#,
        #"{"event":"trip","fields":["tripStatus"]}"#,
        #"{"event":"tripStatus","status":"ENROUTE_TO_PICKUP"}"#,
        #"{"event":"trip","fields":["tripStatus"]}"#,
        #"{"event":"tripStatus","status":"COMPLETE"}"#,
      ])
  }

  @Test("--token-command: a stale token, UNAUTHENTICATED, exactly one more run, then success")
  func staleTokenFromCommand() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let tripID = String(name.split(separator: "/").last!)
    try engine.add(
      [name: [.trip(["tripStatus": "NEW"]), .trip(["tripStatus": "COMPLETE"])]],
      requireToken: "fresh")
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("token-command-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let command = """
      n=$(cat '\(directory.path)/count' 2>/dev/null || echo 0); n=$((n+1)); \
      echo $n > '\(directory.path)/count'; echo "$FLEET_TRIP_ID" >> '\(directory.path)/trips'; \
      if [ $n = 1 ]; then t=stale; else t=fresh; fi; \
      printf '{"token": "%s", "expiresAt": %d}' $t $(( $(date +%s) + 3600 ))
      """
    let result = try await follow(engine, name, token: ["--token-command", command])
    #expect(result.status == 0, "\(result)")
    try checkContract(result)
    #expect(try result.eventNames() == ["error", "trip", "tripStatus", "trip", "tripStatus"])
    let error = try #require(try result.objects().first)
    #expect(error["status"] as? String == "UNAUTHENTICATED")
    #expect(error["category"] as? String == "client")
    let runs = try String(contentsOf: directory.appendingPathComponent("count"), encoding: .utf8)
    #expect(runs.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
    let trips = try String(contentsOf: directory.appendingPathComponent("trips"), encoding: .utf8)
    #expect(trips == "\(tripID)\n\(tripID)\n")
    #expect(
      try await engine.waitForRequests(3, for: name).map(\.authorization) == [
        "Bearer stale", "Bearer fresh", "Bearer fresh",
      ])
    #expect(!result.stderr.contains("fresh") && !result.stderr.contains("stale"))
  }

  @Test("--token-url: the token comes from an HTTP endpoint, {tripID} filled in")
  func tokenFromURL() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let tripID = String(name.split(separator: "/").last!)
    try engine.add([name: [.trip(["tripStatus": "COMPLETE"])]], requireToken: "tok-\(tripID)")
    try await withPeerServer("fake_token_server.py") { tokens in
      let result = try await follow(
        engine, name, token: ["--token-url", "http://127.0.0.1:\(tokens.port)/token/{tripID}"])
      #expect(result.status == 0, "\(result)")
      #expect(try result.eventNames() == ["trip", "tripStatus"])
      let event = try await tokens.waitForEvent("token")
      #expect(event.path == "/token/\(tripID)")
    }
    #expect(try await engine.waitForRequests(1, for: name).map(\.authorization) == ["Bearer tok-\(tripID)"])
  }

  @Test("PERMISSION_DENIED for a while: an error line per call, polling goes on, then success")
  func permissionDenied() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let denied = FakeScript.Step.error("PERMISSION_DENIED", "wrong role")
    try engine.add([name: [denied, denied, denied, .trip(["tripStatus": "COMPLETE"])]])
    let result = try await follow(engine, name)
    #expect(result.status == 0, "\(result)")
    try checkContract(result)
    #expect(try result.eventNames() == ["error", "error", "error", "trip", "tripStatus"])
    for error in try result.objects().prefix(3) {
      #expect(error["code"] as? Int == 7)
      #expect(error["category"] as? String == "client")
      #expect(error["message"] as? String == "wrong role")
    }
  }

  @Test("NOT_FOUND: one error line per call until --max-seconds, then exit 0")
  func notFound() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName("missing")
    let result = try await follow(engine, name, ["--max-seconds", "1.5"])
    #expect(result.status == 0, "\(result)")
    let objects = try result.objects()
    #expect(objects.count >= 2)
    for object in objects {
      #expect(object["event"] as? String == "error")
      #expect(object["status"] as? String == "NOT_FOUND")
      #expect(object["code"] as? Int == 5)
      #expect(object["domain"] as? String == "io.grpc")
      #expect(object["message"] as? String == "trip \(name) not found")
    }
    // One line per failed call; a call still in flight at the time limit prints nothing.
    let sent = try await engine.waitForRequests(objects.count, for: name).count
    #expect(sent == objects.count || sent == objects.count + 1)
  }

  @Test("CANCELED ends it: exit 0, nothing sent afterwards")
  func canceled() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: [.trip(["tripStatus": "NEW"]), .trip(["tripStatus": "CANCELED"])]])
    let result = try await follow(engine, name)
    #expect(result.status == 0, "\(result)")
    #expect(result.lines.last == #"{"event":"tripStatus","status":"CANCELED"}"#)
    #expect(try await engine.waitForRequests(2, for: name).count == 2)
  }

  @Test("repeated identical responses print nothing twice")
  func identicalResponses() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let same = FakeScript.Step.trip([
      "tripStatus": "ENROUTE_TO_PICKUP", "lastLocation": ["location": FakeScript.point(1, 2)],
    ])
    try engine.add([name: [same, same, same, .trip(["tripStatus": "COMPLETE"])]])
    let result = try await follow(engine, name)
    #expect(result.status == 0, "\(result)")
    #expect(
      result.lines == [
        #"{"event":"trip","fields":["tripStatus","vehicleLocation"]}"#,
        #"{"event":"tripStatus","status":"ENROUTE_TO_PICKUP"}"#,
        #"{"event":"vehicleLocation","lat":1.0,"lng":2.0}"#,
        #"{"event":"trip","fields":["tripStatus"]}"#,
        #"{"event":"tripStatus","status":"COMPLETE"}"#,
      ])
    #expect(try await engine.waitForRequests(4, for: name).count == 4)
  }

  @Test("versions go back; a part the server left out keeps its value and prints nothing")
  func partialResponses() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let version = FakeScript.time(1_900_000_000, nanos: 5)
    try engine.add([
      name: [
        .trip([
          "tripStatus": "ENROUTE_TO_PICKUP",
          "route": [FakeScript.point(1, 1), FakeScript.point(1, 2)],
          "currentRouteSegmentVersion": version, "remainingDistanceMeters": 700,
          "currentRouteSegmentTraffic": ["speedReadingInterval": [["speed": "SLOW"]]],
          "currentRouteSegmentTrafficVersion": version,
        ]),
        // Route and traffic left out (same versions); status and distance left out too.
        .trip([
          "lastLocation": ["location": FakeScript.point(1, 1.5)],
          "currentRouteSegmentVersion": version,
        ]),
        // A new route with the same number of points: its content changed, so it prints.
        .trip([
          "route": [FakeScript.point(1, 1.5), FakeScript.point(1, 2.5)],
          "currentRouteSegmentVersion": FakeScript.time(1_900_000_100),
        ]),
        .trip(["tripStatus": "COMPLETE"]),
      ]
    ])
    let result = try await follow(engine, name)
    #expect(result.status == 0, "\(result)")
    try checkContract(result)
    #expect(
      result.lines == [
        #"{"event":"trip","fields":["tripStatus","remainingDistance","activeRoute","#
          + #""activeRouteTraffic"]}"#,
        #"{"event":"tripStatus","status":"ENROUTE_TO_PICKUP"}"#,
        #"{"event":"remainingDistance","meters":700}"#,
        #"{"event":"activeRoute","points":2}"#,
        #"{"event":"activeRouteTraffic","segments":1}"#,
        #"{"event":"trip","fields":["vehicleLocation"]}"#,
        #"{"event":"vehicleLocation","lat":1.0,"lng":1.5}"#,
        #"{"event":"trip","fields":["activeRoute"]}"#,
        #"{"event":"activeRoute","points":2}"#,
        #"{"event":"trip","fields":["tripStatus"]}"#,
        #"{"event":"tripStatus","status":"COMPLETE"}"#,
      ])
    let requests = try await engine.waitForRequests(4, for: name)
    #expect(requests[1].currentRouteSegmentVersion == "1900000000.000000005")
    #expect(requests[1].trafficVersion == "1900000000.000000005")
    #expect(requests[3].currentRouteSegmentVersion == "1900000100.000000000")
  }

  @Test(
    "an invalid trip name is a usage error (exit 2) and nothing reaches the server",
    arguments: [
      ["--trip-name", "providers/p/trips/a/b"], ["--trip-name", "providers/p/trips/"],
      ["--trip-name", "trips/t"], ["--trip-name", "providers//trips/t"],
      ["--provider", "p/q", "--trip", "t"], ["--provider", "p", "--trip", "t/u"],
      ["--provider", "p", "--trip", ""],
    ])
  func invalidTripName(_ trip: [String]) async throws {
    let engine = try SharedFakeEngine.engine()
    let result = try await FleetFollowProcess.run(
      ["--endpoint", "127.0.0.1:\(engine.server.port)", "--plaintext", "--token", "x"] + trip)
    #expect(result.status == 2, "\(result)")
    #expect(result.stdout.isEmpty)
    #expect(!result.stderr.isEmpty)
    // Other tests of the suite share the server, all with trips of FleetTest.provider.
    let strays = engine.server.lines.filter {
      $0.hasPrefix("EVENT getTrip") && !$0.contains(" trip=providers/\(FleetTest.provider)/")
    }
    #expect(strays.isEmpty)
  }

  @Test(
    "bad flags are a usage error: exit 2, nothing on stdout",
    arguments: [
      ["--plaintext", "--trip-name", "providers/p/trips/t", "--token", "x"],  // no --endpoint
      ["--endpoint", "nope", "--trip-name", "providers/p/trips/t", "--token", "x"],
      ["--endpoint", "127.0.0.1:0", "--trip-name", "providers/p/trips/t", "--token", "x"],
      ["--endpoint", "127.0.0.1:1", "--trip-name", "providers/p/trips/t"],  // no token
      [
        "--endpoint", "127.0.0.1:1", "--trip-name", "providers/p/trips/t", "--token", "x",
        "--token-url", "http://127.0.0.1:1/",
      ],
      [
        "--endpoint", "127.0.0.1:1", "--trip-name", "providers/p/trips/t", "--provider", "p",
        "--trip", "t", "--token", "x",
      ],
      ["--endpoint", "127.0.0.1:1", "--provider", "p", "--token", "x"],
      [
        "--endpoint", "127.0.0.1:1", "--trip-name", "providers/p/trips/t", "--token", "x",
        "--poll-interval", "0.05",
      ],
      [
        "--endpoint", "127.0.0.1:1", "--trip-name", "providers/p/trips/t", "--token", "x",
        "--max-seconds", "0",
      ],
      [
        "--endpoint", "127.0.0.1:1", "--trip-name", "providers/p/trips/t", "--token", "x",
        "--poll-interval", "soon",
      ],
      [
        "--endpoint", "127.0.0.1:1", "--trip-name", "providers/p/trips/t", "--token", "x",
        "--no-such-flag",
      ],
      [
        "--endpoint", "127.0.0.1:1", "--trip-name", "providers/p/trips/t", "--token", "x",
        "--keepalive-interval", "-1",
      ],
      [
        "--endpoint", "127.0.0.1:1", "--trip-name", "providers/p/trips/t", "--token", "x",
        "--keepalive-timeout", "0",
      ],
    ])
  func badFlags(_ arguments: [String]) async throws {
    let result = try await FleetFollowProcess.run(arguments)
    #expect(result.status == 2, "\(result)")
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("Usage") || result.stderr.contains("Error"))
  }

  /// The contract's structural rules on any output: every line a JSON object with an
  /// `event`; each `trip` line lists exactly the names of the event lines that follow it up
  /// to the next `trip` or `error` line; error lines carry every key.
  private func checkContract(_ result: FleetFollowProcess.Result) throws {
    let objects = try result.objects()
    var index = 0
    while index < objects.count {
      let event = objects[index]["event"] as? String
      if event == "error" {
        for key in ["domain", "code", "status", "category", "message"] {
          #expect(objects[index][key] != nil, "error line without \(key)")
        }
        index += 1
        continue
      }
      #expect(event == "trip", "a property line without its trip line: \(result.lines[index])")
      let fields = objects[index]["fields"] as? [String] ?? []
      var names: [String] = []
      index += 1
      while index < objects.count, let name = objects[index]["event"] as? String,
        name != "trip", name != "error"
      {
        names.append(name)
        index += 1
      }
      #expect(fields == names)
      #expect(!fields.isEmpty)
    }
  }
}
