import Foundation
import PeerSupport
import Testing

/// The properties added for Consumer SDK parity (issue 14) through `fleet-follow --json`,
/// against the fake Fleet Engine: the new JSON lines, printed by the rules of the existing
/// ones; the model's state on stderr; an invalid trip name as the contract's error line.
@Suite("fleet-follow: the added properties", .fakeFleetEngine)
struct FleetFollowParityTests {
  private func follow(_ engine: FakeFleetEngine, _ name: String) async throws
    -> FleetFollowProcess.Result
  {
    try await FleetFollowProcess.run([
      "--endpoint", "127.0.0.1:\(engine.server.port)", "--plaintext", "--trip-name", name,
      "--token", "test-token", "--poll-interval", "0.1", "--json",
    ])
  }

  private func tripID(_ name: String) -> String { String(name.split(separator: "/").last!) }

  @Test("each added property prints once when it changes, and is listed in the trip line")
  func addedProperties() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: ParityScripts.properties(tripID: tripID(name))])
    let result = try await follow(engine, name)
    #expect(result.status == 0, "\(result)")
    let s = ParityScripts.start
    #expect(
      result.lines == [
        #"{"event":"trip","fields":["tripStatus","remainingWaypoints","intermediateDestinations","#
          + #""vehicleID","tripType","numberOfPassengers","intermediateDestinationIndex","#
          + #""remainingRoute","remainingRouteDistance","remainingRouteTraffic","#
          + #""etaToNextWaypoint"]}"#,
        #"{"event":"tripStatus","status":"ENROUTE_TO_PICKUP"}"#,
        #"{"event":"remainingWaypoints","count":3}"#,
        #"{"event":"intermediateDestinations","count":1}"#,
        #"{"event":"vehicleID","id":"v1"}"#,
        #"{"event":"tripType","type":"EXCLUSIVE"}"#,
        #"{"event":"numberOfPassengers","count":1}"#,
        #"{"event":"intermediateDestinationIndex","index":0}"#,
        #"{"event":"remainingRoute","points":6}"#,
        #"{"event":"remainingRouteDistance","meters":500}"#,
        #"{"event":"remainingRouteTraffic","segments":3}"#,
        #"{"event":"etaToNextWaypoint","seconds":\#(s + 300)}"#,
        // The same answer and the partial one print nothing; then the reassignment.
        #"{"event":"trip","fields":["vehicleID"]}"#,
        #"{"event":"vehicleID","id":"v2"}"#,
        #"{"event":"trip","fields":["tripType","numberOfPassengers"]}"#,
        #"{"event":"tripType","type":"SHARED"}"#,
        #"{"event":"numberOfPassengers","count":2}"#,
        // New traffic beyond the active route: the same count of segments, new values.
        #"{"event":"trip","fields":["remainingWaypoints","remainingRouteTraffic"]}"#,
        #"{"event":"remainingWaypoints","count":3}"#,
        #"{"event":"remainingRouteTraffic","segments":3}"#,
        // The end: the lists empty; the distance unknown, so not printed.
        #"{"event":"trip","fields":["tripStatus","remainingWaypoints","remainingRoute","#
          + #""remainingRouteTraffic"]}"#,
        #"{"event":"tripStatus","status":"COMPLETE"}"#,
        #"{"event":"remainingWaypoints","count":0}"#,
        #"{"event":"remainingRoute","points":0}"#,
        #"{"event":"remainingRouteTraffic","segments":0}"#,
      ])
    // The model's state went to stderr, not stdout.
    #expect(result.stderr.contains("fleet-follow: model state: active"))
    #expect(result.stderr.contains("fleet-follow: model state: inactive"))
  }

  @Test("a trip through two intermediate destinations prints each index once")
  func threeStops() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: ParityScripts.threeStops(tripID: tripID(name))])
    let result = try await follow(engine, name)
    #expect(result.status == 0, "\(result)")
    let objects = try result.objects()
    #expect(
      objects.filter { $0["event"] as? String == "intermediateDestinationIndex" }
        .compactMap { $0["index"] as? Int } == [0, 1])
    #expect(
      objects.filter { $0["event"] as? String == "remainingRouteDistance" }
        .compactMap { $0["meters"] as? Int } == [900, 700, 400, 0])
    #expect(
      objects.filter { $0["event"] as? String == "remainingRoute" }
        .compactMap { $0["points"] as? Int } == [6, 4, 2, 0])
  }

  @Test("a shared vehicle: only this rider's stops and its own pickup ETA are printed")
  func sharedTrip() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: ParityScripts.shared(tripID: tripID(name), otherID: "other-rider")])
    let result = try await follow(engine, name)
    #expect(result.status == 0, "\(result)")
    let lines = result.lines
    #expect(lines.contains(#"{"event":"remainingWaypoints","count":2}"#))
    #expect(lines.contains(#"{"event":"etaToNextWaypoint","seconds":\#(ParityScripts.ownPickupETA)}"#))
    #expect(!lines.contains { $0.contains("\(ParityScripts.otherPickupETA)") })
    // The other rider boarding prints nothing: two updates, the first and COMPLETE.
    #expect(lines.filter { $0.hasPrefix(#"{"event":"trip","#) }.count == 2)
  }

  @Test("an invalid trip name: the INVALID_ARGUMENT error line on stdout, nothing sent, exit 2")
  func invalidTripName() async throws {
    let engine = try SharedFakeEngine.engine()
    let before = engine.server.lines.count
    for flags in [
      ["--trip-name", "providers/x/trip/y"], ["--provider", "x", "--trip", "a/b"],
    ] {
      let result = try await FleetFollowProcess.run(
        ["--endpoint", "127.0.0.1:\(engine.server.port)", "--plaintext"] + flags
          + ["--token", "t", "--json"])
      #expect(result.status == 2, "\(result)")
      let objects = try result.objects()
      #expect(objects.count == 1, "\(result)")
      let error = try #require(objects.first)
      #expect(error["event"] as? String == "error")
      #expect(error["domain"] as? String == "io.grpc")
      #expect(error["code"] as? Int == 3)
      #expect(error["status"] as? String == "INVALID_ARGUMENT")
      #expect(error["category"] as? String == "client")
      #expect((error["message"] as? String)?.isEmpty == false)
      #expect((result.lines.first ?? "").hasPrefix(#"{"event":"error","domain""#))
    }
    // Without --json the same name is the usual usage error: nothing on stdout.
    let plain = try await FleetFollowProcess.run([
      "--endpoint", "127.0.0.1:\(engine.server.port)", "--plaintext", "--trip-name",
      "providers/x/trip/y", "--token", "t",
    ])
    #expect(plain.status == 2)
    #expect(plain.stdout.isEmpty)
    #expect(!engine.server.lines.dropFirst(before).contains { $0.contains("providers/x") })
  }
}
