import FleetConsumer
import Foundation
import JourneySharing
import Testing

@Suite("Trip rendering model")
struct TripRenderingTests {
  private typealias F = TripFixtures

  @Test("a trip on its way: routes by traffic, every marker, texts and status")
  func fullTrip() {
    let rendering = TripRendering(trip: F.enrouteToPickup(), now: F.now)
    #expect(rendering.statusName == "ENROUTE_TO_PICKUP")
    let active = rendering.routeSegments.filter { $0.leg == .active }
    let remaining = rendering.routeSegments.filter { $0.leg == .remaining }
    #expect(active.map(\.speed) == [.normal, .noData, .trafficJam])
    // Two paths, joined where one ends and the next begins.
    #expect(remaining.map(\.speed) == [.noData])
    #expect(remaining.first?.points.count == 4)
    #expect(remaining.first?.color == .remainingGrey)
    #expect(
      rendering.markers.map(\.kind) == [.vehicle, .pickup, .intermediateDestination, .dropoff])
    #expect(rendering.markers.first?.heading == 45)
    #expect(rendering.markers.first { $0.kind == .intermediateDestination }?.index == 0)
    #expect(rendering.etaText == "4 min")
    #expect(rendering.distanceText == "1.2 km")
    #expect(rendering.nextStopETA == F.now.addingTimeInterval(240))
  }

  @Test("a trip with nothing yet renders: no route, no marker, the whole world")
  func emptyTrip() {
    let rendering = TripRendering(trip: FleetEngine.Trip(), now: F.now)
    #expect(rendering.statusName == "UNKNOWN_TRIP_STATUS")
    #expect(rendering.routeSegments.isEmpty)
    #expect(rendering.markers.isEmpty)
    #expect(rendering.etaText == nil && rendering.distanceText == nil)
    #expect(rendering.camera.bounds == .world)
  }

  @Test("a new trip without vehicle or route shows its pickup and drop-off")
  func newTrip() {
    var trip = FleetEngine.Trip()
    trip.name = "providers/p/trips/t"
    trip.tripStatus = .new
    trip.pickupPoint = F.terminal(47.37, 8.54)
    trip.dropoffPoint = F.terminal(47.39, 8.52)
    let rendering = TripRendering(trip: trip, now: F.now)
    #expect(rendering.markers.map(\.kind) == [.pickup, .dropoff])
    #expect(
      rendering.camera.bounds
        == CoordinateBounds(south: 47.37, west: 8.52, north: 47.39, east: 8.54))
  }

  @Test("a model before its first response renders as an empty trip")
  func modelBeforeFirstResponse() throws {
    // Nothing is sent: a model without subscribers does not follow.
    let service = try TripService(
      configuration: .init(
        endpoint: .init(host: "127.0.0.1", port: 1), transportSecurity: .plaintext,
        providerID: "p", accessTokenProvider: FixedAccessTokenProvider(AccessToken("t"))))
    defer { service.shutdown() }
    let model = try service.tripModel(forTripName: "providers/p/trips/t")
    let rendering = TripRendering(model: model, now: F.now)
    #expect(rendering.statusName == "UNKNOWN_TRIP_STATUS")
    #expect(rendering.markers.isEmpty && rendering.routeSegments.isEmpty)
  }

  @Test("hidden markers and polylines are left out, and the camera does not fit them")
  func hidden() {
    var style = JourneySharingStyle()
    style.dropoffMarker.isVisible = false
    style.remainingRoute.isVisible = false
    let rendering = TripRendering(trip: F.enrouteToPickup(), style: style, now: F.now)
    #expect(!rendering.markers.contains { $0.kind == .dropoff })
    #expect(!rendering.routeSegments.contains { $0.leg == .remaining })
    #expect(!rendering.camera.bounds.contains(F.point(47.38, 8.55)))
  }

  @Test("after the trip ends there is no ETA or distance")
  func ended() {
    var trip = F.enrouteToPickup()
    trip.tripStatus = .complete
    let rendering = TripRendering(trip: trip, now: F.now)
    #expect(rendering.statusName == "COMPLETE")
    #expect(rendering.etaText == nil && rendering.distanceText == nil)
  }

  @Test(
    "durations read as the apps write them",
    arguments: [
      (-5.0, "now"), (0, "now"), (1, "1 min"), (20, "1 min"), (60, "1 min"), (61, "2 min"),
      (240, "4 min"), (3540, "59 min"), (3541, "1 h"), (3600, "1 h"), (3900, "1 h 5 min"),
      (7200, "2 h"), (.nan, ""),
    ])
  func durations(seconds: Double, text: String) {
    #expect(TripRendering.durationText(seconds: seconds) == text)
  }

  @Test(
    "ETAs: \"arriving\" under 15 s, seconds below a minute, then minutes",
    arguments: [
      (-5.0, "arriving"), (0, "arriving"), (14.9, "arriving"), (15, "15 s"), (39.2, "40 s"),
      (59, "59 s"), (59.5, "1 min"), (60, "1 min"), (61, "2 min"), (3900, "1 h 5 min"),
      (.nan, ""),
    ])
  func etas(seconds: Double, text: String) {
    #expect(TripRendering.etaText(seconds: seconds) == text)
  }

  @Test(
    "last seen: seconds below a minute, whole minutes below an hour, then hours",
    arguments: [
      (-3.0, "last seen 0 s ago"), (5.7, "last seen 5 s ago"), (59.9, "last seen 59 s ago"),
      (60, "last seen 1 min ago"), (179, "last seen 2 min ago"), (3599, "last seen 59 min ago"),
      (7300, "last seen 2 h ago"), (.infinity, ""),
    ])
  func lastSeen(seconds: Double, text: String) {
    #expect(TripRendering.lastSeenText(secondsAgo: seconds) == text)
  }

  @Test("the ETA text of a trip 40 s away reads in seconds")
  func etaInSeconds() {
    var trip = F.enrouteToPickup()
    trip.etaToFirstWaypoint = GoogleProtobuf.Timestamp(date: F.now.addingTimeInterval(40))
    #expect(TripRendering(trip: trip, now: F.now).etaText == "40 s")
    trip.etaToFirstWaypoint = GoogleProtobuf.Timestamp(date: F.now.addingTimeInterval(10))
    #expect(TripRendering(trip: trip, now: F.now).etaText == "arriving")
  }

  @Test("a vehicle whose update_time is older than the stale threshold is stale, dimmed, last seen")
  func staleByUpdateTime() {
    var style = JourneySharingStyle()
    style.staleLocationThreshold = .seconds(60)
    var trip = F.enrouteToPickup()
    trip.lastLocation?.updateTime = GoogleProtobuf.Timestamp(date: F.now.addingTimeInterval(-150))
    let stale = TripRendering(trip: trip, style: style, now: F.now)
    #expect(stale.isVehicleStale)
    #expect(stale.vehicleLocationTime == F.now.addingTimeInterval(-150))
    #expect(stale.lastSeenText == "last seen 2 min ago")
    let vehicle = stale.markers.first { $0.kind == .vehicle }
    #expect(vehicle?.isStale == true && vehicle?.opacity == style.staleVehicleOpacity)
    #expect(vehicle?.label == "last seen 2 min ago")
    #expect(
      stale.markers.filter { $0.kind != .vehicle }.allSatisfy { !$0.isStale && $0.opacity == 1 })

    trip.lastLocation?.updateTime = GoogleProtobuf.Timestamp(date: F.now.addingTimeInterval(-59))
    let fresh = TripRendering(trip: trip, style: style, now: F.now)
    #expect(!fresh.isVehicleStale && fresh.lastSeenText == nil)
    #expect(fresh.markers.first?.isStale == false && fresh.markers.first?.label == nil)
  }

  @Test("without update_time the location's age counts from when it was received")
  func staleByReceiveTime() {
    var style = JourneySharingStyle()
    style.staleLocationThreshold = .seconds(5)
    let trip = F.enrouteToPickup()
    #expect(trip.lastLocation?.updateTime == nil)
    let old = TripRendering(
      trip: trip, style: style, now: F.now, locationReceivedAt: F.now.addingTimeInterval(-7))
    #expect(old.isVehicleStale && old.lastSeenText == "last seen 7 s ago")
    let recent = TripRendering(
      trip: trip, style: style, now: F.now, locationReceivedAt: F.now.addingTimeInterval(-2))
    #expect(!recent.isVehicleStale)
    // Neither time known: the age cannot be told, so the vehicle is not called stale.
    #expect(!TripRendering(trip: trip, style: style, now: F.now).isVehicleStale)
  }

  @Test("no threshold (the default) or an ended trip: never stale")
  func neverStale() {
    var trip = F.enrouteToPickup()
    trip.lastLocation?.updateTime = GoogleProtobuf.Timestamp(
      date: F.now.addingTimeInterval(-86_400))
    #expect(!TripRendering(trip: trip, now: F.now).isVehicleStale)
    var style = JourneySharingStyle()
    style.staleLocationThreshold = .seconds(60)
    trip.tripStatus = .complete
    #expect(!TripRendering(trip: trip, style: style, now: F.now).isVehicleStale)
  }

  @Test(
    "distances read as the apps write them",
    arguments: [
      (-1.0, "0 m"), (0, "0 m"), (4, "0 m"), (5, "10 m"), (850, "850 m"), (994, "990 m"),
      (996, "1.0 km"), (1234, "1.2 km"), (1250, "1.3 km"), (12_345, "12.3 km"),
      (99_949, "99.9 km"), (99_950, "100 km"), (123_456, "123 km"), (.infinity, "0 m"),
    ])
  func distances(meters: Double, text: String) {
    #expect(TripRendering.distanceText(meters: meters) == text)
  }

  /// The fixture with another rider's stop between this rider's intermediate stop and
  /// drop-off, as Fleet Engine sends it: the other stop's path, and this rider's drop-off
  /// path starting at the other stop.
  private func sharedTrip() -> (FleetEngine.Trip, secret: [GoogleType.LatLng]) {
    var trip = F.enrouteToPickup()
    let secret = [F.point(47.45, 8.8), F.point(47.5, 8.9)]
    trip.remainingWaypoints.insert(
      F.waypoint(trip: "someone-else", at: secret[1], path: [F.point(47.378, 8.547)] + secret),
      at: 2)
    trip.remainingWaypoints[3].pathToWaypoint = [secret[1], F.point(47.38, 8.55)]
    return (trip, secret)
  }

  private func expectHidden(_ secret: [GoogleType.LatLng], in rendering: TripRendering) {
    let points = rendering.routeSegments.flatMap(\.points)
    for hidden in secret {
      #expect(!points.contains(hidden), "\(hidden)")
      #expect(!rendering.camera.bounds.contains(hidden), "\(hidden)")
      #expect(rendering.markers.allSatisfy { $0.position != hidden })
    }
  }

  @Test("other riders' waypoints never appear: not in the routes, not in the camera")
  func privacy() {
    let (trip, secret) = sharedTrip()
    let rendering = TripRendering(trip: trip, now: F.now)
    expectHidden(secret, in: rendering)
    // This rider's own way to the intermediate stop is still drawn.
    let remaining = rendering.routeSegments.filter { $0.leg == .remaining }
    #expect(remaining.map { $0.points.count } == [3])
    #expect(
      rendering.markers.map(\.kind) == [.vehicle, .pickup, .intermediateDestination, .dropoff])
  }

  @Test("the same when the model already hid the other waypoints (hidesOtherTrips)")
  func privacyAfterModelFilter() {
    var (trip, secret) = sharedTrip()
    trip.remainingWaypoints.remove(at: 2)
    // What FleetConsumer's remainingRoute joins still starts at the other rider's stop.
    #expect(trip.remainingRoute.contains(secret[1]))
    expectHidden(secret, in: TripRendering(trip: trip, now: F.now))
  }

  @Test("no active route while the vehicle drives to another rider's stop")
  func activeRouteToAnotherStop() {
    var trip = F.enrouteToPickup()
    let secret = F.point(47.36, 8.53)
    trip.route = [F.point(47.37, 8.54), secret]
    trip.currentRouteSegmentEndPoint = F.waypoint(trip: "someone-else", at: secret, path: [])
    expectHidden([secret], in: TripRendering(trip: trip, now: F.now))
    // Without the end point, an unfiltered first waypoint of another trip tells the same.
    trip.currentRouteSegmentEndPoint = nil
    trip.remainingWaypoints.insert(F.waypoint(trip: "someone-else", at: secret, path: []), at: 0)
    expectHidden([secret], in: TripRendering(trip: trip, now: F.now))
    // Its own stop at the end: drawn.
    trip.remainingWaypoints.remove(at: 0)
    trip.currentRouteSegmentEndPoint = F.waypoint(trip: "rider", at: secret, path: [])
    #expect(TripRendering(trip: trip, now: F.now).routeSegments.contains { $0.leg == .active })
  }

  @Test("a trip without a valid name keeps only waypoints that name no trip")
  func privacyWithoutName() {
    var trip = F.enrouteToPickup()
    trip.name = ""
    let rendering = TripRendering(trip: trip, now: F.now)
    #expect(!rendering.routeSegments.contains { $0.leg == .remaining })
  }
}
