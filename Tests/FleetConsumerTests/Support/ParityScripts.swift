import Foundation

/// Scripts for the Consumer SDK parity scenarios (issue 14), answered by the fake Fleet
/// Engine with Google's classes: the properties added after the first twelve, a trip through
/// two intermediate destinations, and a shared vehicle with two riders.
enum ParityScripts {
  static let start = 1_950_000_000

  private static func point(_ index: Int) -> [String: Any] {
    FakeScript.point(52.5 + Double(index) / 1000, 13.4 + Double(index) / 1000)
  }

  /// A path of `count` points starting at point `from`.
  private static func path(from: Int, count: Int) -> [[String: Any]] {
    (from..<(from + count)).map(point)
  }

  private static func traffic(_ speeds: [String]) -> [String: Any] {
    [
      "speedReadingInterval": speeds.enumerated().map { index, speed in
        [
          "startPolylinePointIndex": index, "endPolylinePointIndex": index + 1, "speed": speed,
        ] as [String: Any]
      }
    ]
  }

  /// A waypoint of `trip` at point `at`, reached by `path`, `meters` from the stop before.
  static func waypoint(
    _ type: String, trip: String, at: Int, path: [[String: Any]]? = nil, meters: Int,
    speeds: [String]? = nil, eta: Int? = nil
  ) -> [String: Any] {
    var waypoint: [String: Any] = [
      "location": ["point": point(at)], "tripId": trip, "waypointType": type,
      "distanceMeters": meters,
    ]
    if let path { waypoint["pathToWaypoint"] = path }
    if let speeds { waypoint["trafficToWaypoint"] = traffic(speeds) }
    if let eta { waypoint["eta"] = FakeScript.time(eta) }
    return waypoint
  }

  private static func version(_ offset: Int) -> String { FakeScript.time(start + offset) }

  // MARK: The added properties

  /// The properties scenario of trip `tripID`: everything in the first answer; the same
  /// again; a partial answer (what Fleet Engine sends when the versions match, and with the
  /// unversioned fields left out); a reassignment to vehicle v2; SHARED with two passengers;
  /// new traffic on the remaining route only; COMPLETE.
  static func properties(tripID: String) -> [FakeScript.Step] {
    func waypoints(paths: Bool, slowSecondLeg: Bool = false) -> [[String: Any]] {
      [
        waypoint(
          "PICKUP_WAYPOINT_TYPE", trip: tripID, at: 2, path: paths ? path(from: 0, count: 3) : nil,
          meters: 100, speeds: paths ? ["NORMAL", "NORMAL"] : nil),
        waypoint(
          "INTERMEDIATE_DESTINATION_WAYPOINT_TYPE", trip: tripID, at: 4,
          path: paths ? path(from: 2, count: 3) : nil, meters: 200,
          speeds: paths ? [slowSecondLeg ? "TRAFFIC_JAM" : "SLOW", "NORMAL"] : nil),
        waypoint(
          "DROP_OFF_WAYPOINT_TYPE", trip: tripID, at: 6,
          path: paths ? path(from: 4, count: 3) : nil, meters: 300,
          speeds: paths ? ["NORMAL"] : nil),
      ]
    }
    let versions: [String: Any] = [
      "remainingWaypointsVersion": version(10), "remainingWaypointsRouteVersion": version(10),
      "intermediateDestinationsVersion": version(10),
    ]
    let full = versions.merging([
      "tripStatus": "ENROUTE_TO_PICKUP", "vehicleId": "v1", "tripType": "EXCLUSIVE",
      "numberOfPassengers": 1,
      "intermediateDestinations": [["point": point(4)]],
      "remainingWaypoints": waypoints(paths: true),
      "etaToFirstWaypoint": FakeScript.time(start + 300),
    ]) { $1 }
    let partial = versions.merging([
      "tripStatus": "ENROUTE_TO_PICKUP", "remainingWaypoints": waypoints(paths: false),
    ]) { $1 }
    let reassigned = partial.merging(["vehicleId": "v2"]) { $1 }
    let shared = partial.merging(["tripType": "SHARED", "numberOfPassengers": 2]) { $1 }
    let jam = partial.merging([
      "remainingWaypoints": waypoints(paths: true, slowSecondLeg: true),
      "remainingWaypointsRouteVersion": version(20),
    ]) { $1 }
    return [
      .trip(full), .trip(full), .trip(partial), .trip(reassigned), .trip(shared), .trip(jam),
      .trip(["tripStatus": "COMPLETE", "remainingWaypointsVersion": version(30)]),
    ]
  }

  // MARK: Three stops

  /// A trip with two intermediate destinations (three stops after the pickup), poll by poll:
  /// to the pickup; to the first destination; waiting there; to the second; to the drop-off;
  /// COMPLETE. Each leg's path has 2 points; legs are 100, 200, 300, 400 m.
  static func threeStops(tripID: String) -> [FakeScript.Step] {
    let stops: [(String, Int)] = [
      ("PICKUP_WAYPOINT_TYPE", 1), ("INTERMEDIATE_DESTINATION_WAYPOINT_TYPE", 3),
      ("INTERMEDIATE_DESTINATION_WAYPOINT_TYPE", 5), ("DROP_OFF_WAYPOINT_TYPE", 7),
    ]
    func remaining(from first: Int) -> [[String: Any]] {
      stops.enumerated().dropFirst(first).map { index, stop in
        waypoint(
          stop.0, trip: tripID, at: stop.1, path: path(from: stop.1 - 1, count: 2),
          meters: (index + 1) * 100, speeds: ["NORMAL"])
      }
    }
    func step(_ status: String, index: Int?, from first: Int) -> FakeScript.Step {
      var trip: [String: Any] = [
        "tripStatus": status, "remainingWaypoints": remaining(from: first),
        "remainingWaypointsVersion": version(first), "remainingWaypointsRouteVersion": version(first),
        "intermediateDestinations": [["point": point(3)], ["point": point(5)]],
        "intermediateDestinationsVersion": version(0),
      ]
      if let index { trip["intermediateDestinationIndex"] = index }
      return .trip(trip)
    }
    return [
      step("ENROUTE_TO_PICKUP", index: nil, from: 0),
      step("ENROUTE_TO_INTERMEDIATE_DESTINATION", index: 0, from: 1),
      step("ARRIVED_AT_INTERMEDIATE_DESTINATION", index: 0, from: 1),
      step("ENROUTE_TO_INTERMEDIATE_DESTINATION", index: 1, from: 2),
      step("ENROUTE_TO_DROPOFF", index: 1, from: 3),
      .trip(["tripStatus": "COMPLETE", "remainingWaypointsVersion": version(9)]),
    ]
  }

  // MARK: A shared vehicle

  static let otherPickupETA = start + 120
  static let ownPickupETA = start + 400
  static let ownDropoffETA = start + 1500

  /// Trip `tripID` sharing vehicle `shared-v` with trip `otherID`, whose rider is picked up
  /// first: the vehicle's stops are the other pickup, ours, the other drop-off, ours. Then the
  /// other rider is on board (the vehicle's next stop is our pickup, with the same ETA);
  /// then COMPLETE.
  static func shared(tripID: String, otherID: String) -> [FakeScript.Step] {
    let otherPickup = waypoint(
      "PICKUP_WAYPOINT_TYPE", trip: otherID, at: 1, path: path(from: 0, count: 2), meters: 100,
      speeds: ["SLOW"], eta: otherPickupETA)
    let ownPickup = waypoint(
      "PICKUP_WAYPOINT_TYPE", trip: tripID, at: 3, path: path(from: 1, count: 3), meters: 200,
      speeds: ["NORMAL", "SLOW"], eta: ownPickupETA)
    let otherDropoff = waypoint(
      "DROP_OFF_WAYPOINT_TYPE", trip: otherID, at: 5, path: path(from: 3, count: 3), meters: 300,
      speeds: ["NORMAL"], eta: start + 900)
    let ownDropoff = waypoint(
      "DROP_OFF_WAYPOINT_TYPE", trip: tripID, at: 7, path: path(from: 5, count: 3), meters: 400,
      speeds: ["TRAFFIC_JAM"], eta: ownDropoffETA)
    let first: [String: Any] = [
      "tripStatus": "ENROUTE_TO_PICKUP", "tripType": "SHARED", "vehicleId": "shared-v",
      "numberOfPassengers": 1,
      "remainingWaypoints": [otherPickup, ownPickup, otherDropoff, ownDropoff],
      "vehicleWaypoints": [otherPickup, ownPickup, otherDropoff, ownDropoff],
      "remainingWaypointsVersion": version(10), "remainingWaypointsRouteVersion": version(10),
      "etaToFirstWaypoint": FakeScript.time(otherPickupETA),
      "remainingTimeToFirstWaypoint": "60s",
    ]
    let onBoard: [String: Any] = [
      "tripStatus": "ENROUTE_TO_PICKUP",
      "remainingWaypoints": [ownPickup, otherDropoff, ownDropoff],
      "vehicleWaypoints": [ownPickup, otherDropoff, ownDropoff],
      "remainingWaypointsVersion": version(20), "remainingWaypointsRouteVersion": version(10),
      "etaToFirstWaypoint": FakeScript.time(ownPickupETA),
      "remainingTimeToFirstWaypoint": "340s",
    ]
    return [
      .trip(first), .trip(onBoard),
      .trip(["tripStatus": "COMPLETE", "remainingWaypointsVersion": version(30)]),
    ]
  }
}
