import Foundation
import Testing

@testable import FleetConsumer

@Suite("Changed properties of an update")
struct TripChangesTests {
  private func point(_ latitude: Double, _ longitude: Double) -> GoogleType.LatLng {
    var point = GoogleType.LatLng()
    point.latitude = latitude
    point.longitude = longitude
    return point
  }

  @Test("nothing changed: no events at all")
  func unchanged() {
    var trip = FleetEngine.Trip()
    trip.tripStatus = .new
    #expect(TripChanges(from: trip, to: trip).isEmpty)
    #expect(TripChanges(from: FleetEngine.Trip(), to: FleetEngine.Trip()).isEmpty)
  }

  @Test("every property, in the fixed order, after one tripUpdated with all their fields")
  func everyProperty() {
    var trip = FleetEngine.Trip()
    trip.tripStatus = .enrouteToDropoff
    trip.remainingDistanceMeters = 10
    trip.route = [point(1, 1)]
    var vehicle = FleetEngine.VehicleLocation()
    vehicle.location = point(2, 2)
    trip.lastLocation = vehicle
    var pickup = FleetEngine.TerminalLocation()
    pickup.point = point(3, 3)
    trip.pickupPoint = pickup
    trip.dropoffPoint = pickup
    trip.pickupTime = GoogleProtobuf.Timestamp(date: Date(timeIntervalSince1970: 100))
    trip.dropoffTime = GoogleProtobuf.Timestamp(date: Date(timeIntervalSince1970: 200))
    trip.remainingWaypoints = [FleetEngine.TripWaypoint()]
    trip.intermediateDestinations = [pickup]
    trip.currentRouteSegmentTraffic = FleetEngine.ConsumableTrafficPolyline()
    trip.etaToFirstWaypoint = GoogleProtobuf.Timestamp(date: Date(timeIntervalSince1970: 50))
    trip.name = "providers/p/trips/t"
    trip.vehicleID = "v1"
    trip.tripType = .shared
    trip.numberOfPassengers = 2
    trip.intermediateDestinationIndex = 0
    // A second waypoint makes the remaining route: its path, distance and traffic.
    var next = FleetEngine.TripWaypoint()
    next.pathToWaypoint = [point(4, 4), point(5, 5)]
    next.distanceMeters = 700
    var interval = FleetEngine.SpeedReadingInterval()
    interval.endPolylinePointIndex = 1
    interval.speed = .slow
    var traffic = FleetEngine.ConsumableTrafficPolyline()
    traffic.speedReadingInterval = [interval]
    next.trafficToWaypoint = traffic
    trip.remainingWaypoints.append(next)
    let changes = TripChanges(from: FleetEngine.Trip(), to: trip)
    #expect(
      changes.fields
        == TripModelUpdatedPropertyFields(TripModelUpdatedPropertyFields.allFields.map(\.field)))
    #expect(changes.events.first == .tripUpdated(trip, changes.fields))
    let expected: [TripModelEvent] = [
      .tripName("providers/p/trips/t"), .vehicleID("v1"), .tripType(.shared),
      .tripStatus(.enrouteToDropoff), .numberOfPassengers(2), .activeRouteRemainingDistance(10),
      .activeRoute([point(1, 1)]),
      .vehicleLocation(vehicle), .pickupLocation(pickup), .dropoffLocation(pickup),
      .pickupETA(Date(timeIntervalSince1970: 100)), .dropoffETA(Date(timeIntervalSince1970: 200)),
      .remainingWaypoints([FleetEngine.TripWaypoint(), next]), .intermediateDestinations([pickup]),
      .intermediateDestinationIndex(0),
      .activeRouteTraffic(FleetEngine.ConsumableTrafficPolyline()),
      .remainingRoute([point(4, 4), point(5, 5)]), .remainingRouteDistance(700),
      .remainingRouteTraffic([interval]),
      .etaToNextWaypoint(Date(timeIntervalSince1970: 50)),
    ]
    #expect(Array(changes.events.dropFirst()) == expected)
  }

  @Test("a vehicle location whose position stays put is not a change")
  func vehicleTimestampOnly() {
    var before = FleetEngine.Trip()
    var location = FleetEngine.VehicleLocation()
    location.location = point(1, 1)
    location.heading = 90
    before.lastLocation = location
    var after = before
    after.lastLocation?.heading = 180
    #expect(TripChanges(from: before, to: after).isEmpty)
    after.lastLocation?.location = point(1, 1.0001)
    #expect(TripChanges(from: before, to: after).fields == .vehicleLocation)
  }

  @Test("a list whose content changes at the same length is a change")
  func listContent() {
    var before = FleetEngine.Trip()
    before.route = [point(1, 1), point(1, 2)]
    var after = before
    after.route = [point(1, 1), point(1, 3)]
    #expect(TripChanges(from: before, to: after).fields == .activeRoute)
  }

  @Test("a vehicle reassignment alone is one vehicleID event, passengers alone one count")
  func vehicleAndPassengers() {
    var before = FleetEngine.Trip()
    before.vehicleID = "v1"
    before.numberOfPassengers = 1
    var after = before
    after.vehicleID = "v9"
    let changes = TripChanges(from: before, to: after)
    #expect(changes.fields == .vehicleID)
    #expect(Array(changes.events.dropFirst()) == [.vehicleID("v9")])
    var more = before
    more.numberOfPassengers = 3
    #expect(Array(TripChanges(from: before, to: more).events.dropFirst()) == [.numberOfPassengers(3)])
  }

  @Test("the intermediate index counts only on a trip with intermediate destinations")
  func intermediateIndex() {
    var before = FleetEngine.Trip()
    before.intermediateDestinations = [FleetEngine.TerminalLocation()]
    var after = before
    after.intermediateDestinationIndex = 1
    #expect(
      Array(TripChanges(from: before, to: after).events.dropFirst()) == [
        .intermediateDestinationIndex(1)
      ])
    // Without destinations Fleet Engine ignores the index, and so do we.
    var plain = FleetEngine.Trip()
    plain.intermediateDestinationIndex = 2
    #expect(TripChanges(from: FleetEngine.Trip(), to: plain).isEmpty)
  }

  @Test("the remaining route joins the paths beyond the first waypoint; traffic indices follow")
  func remainingRoute() {
    func waypoint(_ points: [GoogleType.LatLng], meters: Int32?, slow: ClosedRange<Int32>?)
      -> FleetEngine.TripWaypoint
    {
      var waypoint = FleetEngine.TripWaypoint()
      waypoint.pathToWaypoint = points
      waypoint.distanceMeters = meters
      if let slow {
        var interval = FleetEngine.SpeedReadingInterval()
        interval.startPolylinePointIndex = slow.lowerBound
        interval.endPolylinePointIndex = slow.upperBound
        interval.speed = .slow
        var traffic = FleetEngine.ConsumableTrafficPolyline()
        traffic.speedReadingInterval = [interval]
        waypoint.trafficToWaypoint = traffic
      }
      return waypoint
    }
    var trip = FleetEngine.Trip()
    trip.remainingWaypoints = [
      waypoint([point(0, 0), point(0, 1)], meters: 100, slow: 0...1),
      waypoint([point(0, 1), point(0, 2), point(0, 3)], meters: 200, slow: 1...2),
      waypoint([point(0, 3), point(0, 4)], meters: 300, slow: 0...1),
    ]
    #expect(trip.remainingRoute == [point(0, 1), point(0, 2), point(0, 3), point(0, 3), point(0, 4)])
    #expect(trip.remainingRouteDistanceMeters == 500)
    #expect(
      trip.remainingRouteTraffic.map { [$0.startPolylinePointIndex, $0.endPolylinePointIndex] }
        == [[1, 2], [3, 4]])
    // One waypoint left: the active route is all there is.
    trip.remainingWaypoints.removeFirst(2)
    #expect(trip.remainingRoute.isEmpty)
    #expect(trip.remainingRouteDistanceMeters == 0)
    #expect(trip.remainingRouteTraffic.isEmpty)
    // A waypoint beyond the first without a distance: unknown, not a partial sum.
    trip.remainingWaypoints = [
      waypoint([], meters: 1, slow: nil), waypoint([], meters: nil, slow: nil),
      waypoint([], meters: 5, slow: nil),
    ]
    #expect(trip.remainingRouteDistanceMeters == nil)
    trip.remainingWaypoints = []
    #expect(trip.remainingRouteDistanceMeters == nil)
  }

  @Test("a waypoint that changed only before the remaining route changes only the waypoints")
  func remainingRouteUnchanged() {
    var first = FleetEngine.TripWaypoint()
    first.distanceMeters = 100
    var second = FleetEngine.TripWaypoint()
    second.pathToWaypoint = [point(1, 1)]
    second.distanceMeters = 200
    var before = FleetEngine.Trip()
    before.remainingWaypoints = [first, second]
    var after = before
    after.remainingWaypoints[0].distanceMeters = 50
    #expect(TripChanges(from: before, to: after).fields == .remainingWaypoints)
    after.remainingWaypoints[1].pathToWaypoint = [point(1, 2)]
    #expect(TripChanges(from: before, to: after).fields == [.remainingWaypoints, .remainingRoute])
  }

  @Test("the fields' description lists them in callback order")
  func fieldsDescription() {
    let fields: TripModelUpdatedPropertyFields = [.dropoffETA, .tripStatus, .vehicleLocation]
    #expect(fields.description == "[tripStatus, vehicleLocation, dropoffETA]")
  }
}
