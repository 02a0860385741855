import FleetConsumer
import Foundation

/// Trips built in code, the same on every run: a point grid around Zurich, so that every
/// coordinate a test checks is written down here.
enum TripFixtures {
  static let now = Date(timeIntervalSince1970: 1_750_000_000)

  static func point(_ latitude: Double, _ longitude: Double) -> GoogleType.LatLng {
    var point = GoogleType.LatLng()
    point.latitude = latitude
    point.longitude = longitude
    return point
  }

  /// `count` points going north-east from (47.37, 8.54), 0.001° apart.
  static func path(_ count: Int, from start: (Double, Double) = (47.37, 8.54))
    -> [GoogleType.LatLng]
  {
    (0..<count).map { point(start.0 + Double($0) * 0.001, start.1 + Double($0) * 0.001) }
  }

  static func interval(
    _ start: Int32, _ end: Int32, _ speed: FleetEngine.SpeedReadingInterval.Speed
  )
    -> FleetEngine.SpeedReadingInterval
  {
    var interval = FleetEngine.SpeedReadingInterval()
    interval.startPolylinePointIndex = start
    interval.endPolylinePointIndex = end
    interval.speed = speed
    return interval
  }

  static func terminal(_ latitude: Double, _ longitude: Double) -> FleetEngine.TerminalLocation {
    var location = FleetEngine.TerminalLocation()
    location.point = point(latitude, longitude)
    return location
  }

  static func waypoint(
    trip: String, at location: GoogleType.LatLng, path: [GoogleType.LatLng],
    traffic: [FleetEngine.SpeedReadingInterval] = []
  ) -> FleetEngine.TripWaypoint {
    var waypoint = FleetEngine.TripWaypoint()
    waypoint.tripID = trip
    var terminal = FleetEngine.TerminalLocation()
    terminal.point = location
    waypoint.location = terminal
    waypoint.pathToWaypoint = path
    if !traffic.isEmpty {
      var polyline = FleetEngine.ConsumableTrafficPolyline()
      polyline.speedReadingInterval = traffic
      waypoint.trafficToWaypoint = polyline
    }
    return waypoint
  }

  /// A trip on its way to pickup: a 6-point active route with traffic NORMAL on points 0…2,
  /// nothing on 2…3, TRAFFIC_JAM on 3…5; a vehicle at the route's start heading 45°; pickup
  /// at the route's end; one intermediate destination; drop-off beyond; a remaining route
  /// of 4 points (two paths without traffic, one NO_DATA segment) through the intermediate
  /// destination to the drop-off; ETA in 4 minutes and 1,234 m to go.
  static func enrouteToPickup() -> FleetEngine.Trip {
    var trip = FleetEngine.Trip()
    trip.name = "providers/p/trips/rider"
    trip.tripStatus = .enrouteToPickup
    let route = path(6)
    trip.route = route
    var traffic = FleetEngine.ConsumableTrafficPolyline()
    traffic.speedReadingInterval = [interval(0, 2, .normal), interval(3, 5, .trafficJam)]
    trip.currentRouteSegmentTraffic = traffic
    var vehicle = FleetEngine.VehicleLocation()
    vehicle.location = route[0]
    vehicle.heading = 45
    trip.lastLocation = vehicle
    trip.pickupPoint = terminal(route[5].latitude, route[5].longitude)
    trip.intermediateDestinations = [terminal(47.378, 8.547)]
    trip.dropoffPoint = terminal(47.38, 8.55)
    trip.remainingWaypoints = [
      waypoint(trip: "rider", at: route[5], path: route),
      waypoint(
        trip: "rider", at: point(47.378, 8.547),
        path: [route[5], point(47.377, 8.546), point(47.378, 8.547)]),
      waypoint(
        trip: "rider", at: point(47.38, 8.55), path: [point(47.378, 8.547), point(47.38, 8.55)]),
    ]
    trip.etaToFirstWaypoint = GoogleProtobuf.Timestamp(date: now.addingTimeInterval(4 * 60))
    trip.remainingDistanceMeters = 1234
    return trip
  }
}
