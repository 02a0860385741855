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
    let changes = TripChanges(from: FleetEngine.Trip(), to: trip)
    #expect(
      changes.fields
        == TripModelUpdatedPropertyFields(TripModelUpdatedPropertyFields.allFields.map(\.field)))
    #expect(changes.events.first == .tripUpdated(trip, changes.fields))
    let expected: [TripModelEvent] = [
      .tripStatus(.enrouteToDropoff), .activeRouteRemainingDistance(10),
      .activeRoute([point(1, 1)]),
      .vehicleLocation(vehicle), .pickupLocation(pickup), .dropoffLocation(pickup),
      .pickupETA(Date(timeIntervalSince1970: 100)), .dropoffETA(Date(timeIntervalSince1970: 200)),
      .remainingWaypoints([FleetEngine.TripWaypoint()]), .intermediateDestinations([pickup]),
      .activeRouteTraffic(FleetEngine.ConsumableTrafficPolyline()),
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

  @Test("untracked fields (vehicle ID, passengers) change the trip but call nothing")
  func untracked() {
    var after = FleetEngine.Trip()
    after.vehicleID = "v9"
    after.numberOfPassengers = 3
    #expect(TripChanges(from: FleetEngine.Trip(), to: after).isEmpty)
  }

  @Test("the fields' description lists them in callback order")
  func fieldsDescription() {
    let fields: TripModelUpdatedPropertyFields = [.dropoffETA, .tripStatus, .vehicleLocation]
    #expect(fields.description == "[tripStatus, vehicleLocation, dropoffETA]")
  }
}
