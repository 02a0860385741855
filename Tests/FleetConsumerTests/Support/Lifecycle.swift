import FleetConsumer
import Foundation

/// A trip's whole life as fake Fleet Engine answers, one per poll: NEW, ENROUTE_TO_PICKUP
/// (twice, the vehicle moving, distance and pickup ETA shrinking, the route sent once and then
/// left out because its version did not change), ARRIVED_AT_PICKUP, ENROUTE_TO_DROPOFF (a new
/// route), COMPLETE (no waypoints left).
enum Lifecycle {
  static let start = 1_900_000_000
  static let pickup = (52.5000, 13.4000)
  static let dropoff = (52.5200, 13.4500)
  static let routeVersion1 = FakeScript.time(start + 10)
  static let routeVersion2 = FakeScript.time(start + 300)

  static func waypoint(_ type: String, _ point: (Double, Double), trip: String) -> [String: Any] {
    ["location": FakeScript.location(point.0, point.1), "tripId": trip, "waypointType": type]
  }

  /// The steps for trip `tripName`: its waypoints carry its own ID, as Fleet Engine's do.
  static func steps(tripName: String, ending terminal: String = "COMPLETE") -> [FakeScript.Step] {
    steps(tripID: String(tripName.split(separator: "/").last ?? ""), ending: terminal)
  }

  static func steps(tripID: String, ending terminal: String = "COMPLETE") -> [FakeScript.Step] {
    let pickupWaypoint = waypoint("PICKUP_WAYPOINT_TYPE", pickup, trip: tripID)
    let dropoffWaypoint = waypoint("DROP_OFF_WAYPOINT_TYPE", dropoff, trip: tripID)
    let points: [[String: Any]] = [
      FakeScript.point(52.49, 13.38), FakeScript.point(52.495, 13.39),
      FakeScript.point(pickup.0, pickup.1),
    ]
    let secondRoute: [[String: Any]] = [
      FakeScript.point(pickup.0, pickup.1), FakeScript.point(52.505, 13.42),
      FakeScript.point(52.51, 13.44), FakeScript.point(dropoff.0, dropoff.1),
    ]
    return [
      .trip([
        "tripStatus": "NEW",
        "pickupPoint": FakeScript.location(pickup.0, pickup.1),
        "dropoffPoint": FakeScript.location(dropoff.0, dropoff.1),
        "pickupTime": FakeScript.time(start + 600),
        "dropoffTime": FakeScript.time(start + 1800),
      ]),
      .trip([
        "tripStatus": "ENROUTE_TO_PICKUP", "vehicleId": "vehicle-1",
        "lastLocation": ["location": FakeScript.point(52.49, 13.38)],
        "remainingDistanceMeters": 2000,
        "pickupTime": FakeScript.time(start + 500),
        "route": points, "currentRouteSegmentVersion": routeVersion1,
        "remainingWaypoints": [pickupWaypoint, dropoffWaypoint],
        "remainingWaypointsVersion": FakeScript.time(start + 10),
      ]),
      .trip([
        "tripStatus": "ENROUTE_TO_PICKUP",
        "lastLocation": ["location": FakeScript.point(52.495, 13.39)],
        "remainingDistanceMeters": 900,
        "pickupTime": FakeScript.time(start + 400),
        "currentRouteSegmentVersion": routeVersion1,
        "remainingWaypoints": [pickupWaypoint, dropoffWaypoint],
        "remainingWaypointsVersion": FakeScript.time(start + 10),
      ]),
      .trip([
        "tripStatus": "ARRIVED_AT_PICKUP",
        "lastLocation": ["location": FakeScript.point(pickup.0, pickup.1)],
        "remainingDistanceMeters": 0,
        "currentRouteSegmentVersion": routeVersion1,
      ]),
      .trip([
        "tripStatus": "ENROUTE_TO_DROPOFF",
        "lastLocation": ["location": FakeScript.point(52.505, 13.42)],
        "remainingDistanceMeters": 3000,
        "dropoffTime": FakeScript.time(start + 1500),
        "route": secondRoute, "currentRouteSegmentVersion": routeVersion2,
        "remainingWaypoints": [dropoffWaypoint],
        "remainingWaypointsVersion": FakeScript.time(start + 400),
      ]),
      .trip([
        "tripStatus": terminal,
        "lastLocation": ["location": FakeScript.point(dropoff.0, dropoff.1)],
        "remainingWaypointsVersion": FakeScript.time(start + 1500),
      ]),
    ]
  }

  /// The callbacks a subscriber gets for ``steps(tripID:ending:)``, in order, as summaries.
  /// The waypoints carry no distances, so the remaining route's distance is unknown (nil, as
  /// before the first response) while two are left, 0 on the last leg, and unknown again
  /// once none is left.
  static let expectedSummaries: [String] = [
    "state(active)",
    "tripUpdated[tripName, tripStatus, pickupLocation, dropoffLocation, pickupETA, dropoffETA]",
    "tripName", "tripStatus(NEW)", "pickupLocation(52.5,13.4)", "dropoffLocation(52.52,13.45)",
    "pickupETA(\(start + 600))", "dropoffETA(\(start + 1800))",
    "tripUpdated[vehicleID, tripStatus, activeRouteRemainingDistance, activeRoute, "
      + "vehicleLocation, pickupETA, remainingWaypoints]",
    "vehicleID(vehicle-1)", "tripStatus(ENROUTE_TO_PICKUP)", "remainingDistance(2000)",
    "activeRoute(3 points)", "vehicleLocation(52.49,13.38)", "pickupETA(\(start + 500))",
    "remainingWaypoints(2)",
    "tripUpdated[activeRouteRemainingDistance, vehicleLocation, pickupETA]",
    "remainingDistance(900)", "vehicleLocation(52.495,13.39)", "pickupETA(\(start + 400))",
    "tripUpdated[tripStatus, activeRouteRemainingDistance, vehicleLocation]",
    "tripStatus(ARRIVED_AT_PICKUP)", "remainingDistance(0)", "vehicleLocation(52.5,13.4)",
    "tripUpdated[tripStatus, activeRouteRemainingDistance, activeRoute, vehicleLocation, "
      + "dropoffETA, remainingWaypoints, remainingRouteDistance]",
    "tripStatus(ENROUTE_TO_DROPOFF)", "remainingDistance(3000)", "activeRoute(4 points)",
    "vehicleLocation(52.505,13.42)", "dropoffETA(\(start + 1500))", "remainingWaypoints(1)",
    "remainingRouteDistance(0)",
    "tripUpdated[tripStatus, vehicleLocation, remainingWaypoints, remainingRouteDistance]",
    "tripStatus(COMPLETE)", "vehicleLocation(52.52,13.45)", "remainingWaypoints(0)",
    "remainingRouteDistance(nil)",
    "state(inactive)",
  ]
}

/// A token provider that counts its calls and hands out tokens from a list (the last one
/// again once the list is used up).
final class CountingTokenProvider: AccessTokenProvider {
  private let tokens: [AccessToken]
  private let calls = FleetSyncCounter()

  init(_ tokens: [AccessToken]) {
    self.tokens = tokens
  }

  convenience init(_ tokens: String...) {
    self.init(tokens.map { AccessToken($0) })
  }

  var callCount: Int { calls.value }

  func accessToken(for context: AuthorizationContext) async throws -> AccessToken {
    let index = calls.increment() - 1
    return tokens[min(index, tokens.count - 1)]
  }
}
