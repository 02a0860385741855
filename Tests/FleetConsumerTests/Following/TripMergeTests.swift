import Testing

@testable import FleetConsumer

@Suite("Merging partial GetTrip responses")
struct TripMergeTests {
  private func stamp(_ seconds: Int64) -> GoogleProtobuf.Timestamp {
    var stamp = GoogleProtobuf.Timestamp()
    stamp.seconds = seconds
    return stamp
  }

  private func point(_ latitude: Double, _ longitude: Double) -> GoogleType.LatLng {
    var point = GoogleType.LatLng()
    point.latitude = latitude
    point.longitude = longitude
    return point
  }

  private func held() -> FleetEngine.Trip {
    var trip = FleetEngine.Trip()
    trip.name = "providers/p/trips/t"
    trip.vehicleID = "v1"
    trip.tripStatus = .enrouteToPickup
    trip.route = [point(1, 1), point(1, 2)]
    trip.currentRouteSegment = "encoded"
    trip.currentRouteSegmentVersion = stamp(10)
    var traffic = FleetEngine.ConsumableTrafficPolyline()
    traffic.speedReadingInterval = [FleetEngine.SpeedReadingInterval()]
    trip.currentRouteSegmentTraffic = traffic
    trip.currentRouteSegmentTrafficVersion = stamp(20)
    var waypoint = FleetEngine.TripWaypoint()
    waypoint.tripID = "t"
    waypoint.waypointType = .pickupWaypointType
    waypoint.pathToWaypoint = [point(1, 1), point(1, 3)]
    trip.remainingWaypoints = [waypoint]
    trip.remainingWaypointsVersion = stamp(30)
    trip.remainingWaypointsRouteVersion = stamp(40)
    trip.remainingDistanceMeters = 900
    var location = FleetEngine.VehicleLocation()
    location.location = point(1, 1)
    trip.lastLocation = location
    trip.intermediateDestinations = [FleetEngine.TerminalLocation()]
    trip.intermediateDestinationsVersion = stamp(50)
    trip.numberOfPassengers = 2
    trip.lastLocationSnappable = true
    return trip
  }

  @Test("an empty response changes nothing but the one bool that cannot be absent")
  func emptyResponse() {
    var expected = held()
    expected.lastLocationSnappable = false
    #expect(held().merged(with: FleetEngine.Trip()) == expected)
  }

  @Test("values the response carries replace the held ones")
  func presentValuesWin() {
    var response = FleetEngine.Trip()
    response.tripStatus = .arrivedAtPickup
    response.remainingDistanceMeters = 0
    response.vehicleID = "v2"
    let merged = held().merged(with: response)
    #expect(merged.tripStatus == .arrivedAtPickup)
    #expect(merged.remainingDistanceMeters == 0)
    #expect(merged.vehicleID == "v2")
    #expect(merged.route == held().route)
  }

  @Test("the route is kept while its version stays, replaced (even by nothing) when it moves")
  func routeByVersion() {
    var same = FleetEngine.Trip()
    same.currentRouteSegmentVersion = stamp(10)
    #expect(held().merged(with: same).route.count == 2)
    #expect(held().merged(with: same).currentRouteSegment == "encoded")

    var moved = FleetEngine.Trip()
    moved.currentRouteSegmentVersion = stamp(11)
    let merged = held().merged(with: moved)
    #expect(merged.route.isEmpty)
    #expect(merged.currentRouteSegment.isEmpty)
    #expect(merged.currentRouteSegmentVersion == stamp(11))

    var newRoute = moved
    newRoute.route = [point(2, 2)]
    #expect(held().merged(with: newRoute).route == [point(2, 2)])
  }

  @Test("traffic is kept while its version stays, cleared when it moves without traffic")
  func trafficByVersion() {
    #expect(held().merged(with: FleetEngine.Trip()).currentRouteSegmentTraffic != nil)
    var moved = FleetEngine.Trip()
    moved.currentRouteSegmentTrafficVersion = stamp(21)
    #expect(held().merged(with: moved).currentRouteSegmentTraffic == nil)
  }

  @Test("waypoint paths left out with an unchanged route version are filled in from the held ones")
  func waypointPaths() {
    var response = FleetEngine.Trip()
    var bare = held().remainingWaypoints[0]
    bare.pathToWaypoint = []
    bare.distanceMeters = 100
    response.remainingWaypoints = [bare]
    response.remainingWaypointsRouteVersion = stamp(40)
    let merged = held().merged(with: response)
    #expect(merged.remainingWaypoints[0].pathToWaypoint.count == 2)
    #expect(merged.remainingWaypoints[0].distanceMeters == 100)

    response.remainingWaypointsRouteVersion = stamp(41)
    #expect(held().merged(with: response).remainingWaypoints[0].pathToWaypoint.isEmpty)
  }

  @Test("an empty waypoint list counts only when its version moved")
  func emptyWaypoints() {
    var response = FleetEngine.Trip()
    response.remainingWaypointsVersion = stamp(30)
    #expect(held().merged(with: response).remainingWaypoints.count == 1)
    response.remainingWaypointsVersion = stamp(31)
    #expect(held().merged(with: response).remainingWaypoints.isEmpty)
  }

  @Test("intermediate destinations follow their version the same way")
  func intermediateDestinations() {
    var response = FleetEngine.Trip()
    #expect(held().merged(with: response).intermediateDestinations.count == 1)
    response.intermediateDestinationsVersion = stamp(51)
    #expect(held().merged(with: response).intermediateDestinations.isEmpty)
  }

  @Test("the first waypoint's path shares the route's storage when they hold the same points")
  func firstPathSharesRoute() {
    func base(_ array: [GoogleType.LatLng]) -> UnsafeRawPointer? {
      array.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }
    var response = FleetEngine.Trip()
    response.route = [point(5, 5), point(5, 6), point(5, 7)]
    response.currentRouteSegmentVersion = stamp(11)
    var first = FleetEngine.TripWaypoint()
    first.tripID = "t"
    first.waypointType = .pickupWaypointType
    first.pathToWaypoint = [point(5, 5), point(5, 6), point(5, 7)]
    var second = first
    second.waypointType = .dropOffWaypointType
    second.pathToWaypoint = [point(5, 5), point(5, 6), point(5, 8)]
    response.remainingWaypoints = [first, second]
    response.remainingWaypointsRouteVersion = stamp(41)
    #expect(base(response.route) != base(response.remainingWaypoints[0].pathToWaypoint))
    let merged = held().merged(with: response)
    #expect(merged.remainingWaypoints[0].pathToWaypoint == response.route)
    #expect(base(merged.remainingWaypoints[0].pathToWaypoint) == base(merged.route))
    // A path with other points keeps its own.
    #expect(merged.remainingWaypoints[1].pathToWaypoint == second.pathToWaypoint)
    #expect(base(merged.remainingWaypoints[1].pathToWaypoint) != base(merged.route))
  }
}
