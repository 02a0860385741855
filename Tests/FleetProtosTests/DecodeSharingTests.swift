@_spi(GeneratedCode) import FleetProtos
import FleetProtosFixtures
@_spi(GeneratedCode) import ProtoRuntime
import Testing

/// A field of a message type in a Trip's tree that holds a list or string is compared, in
/// place, with the fields of its type decoded before it in the same message; when it decodes
/// to exactly the same value it shares theirs (a Trip's vehicle waypoints are usually its
/// remaining waypoints). So is a list, or a message holding one, with the field of its type
/// in the first element of an earlier list of such a message (a Trip's route is its first
/// waypoint's path). A waypoint's location that is the trip's pickup point is decoded again,
/// its long strings those already built (ProtoDecodeStrings).
@Suite("Decoding shares sub-messages a message repeats")
struct DecodeSharingTests {
  func buffer<T>(_ array: [T]) -> UnsafeRawPointer? {
    array.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
  }

  func roundTrip(_ trip: FleetEngine.Trip) throws -> FleetEngine.Trip {
    try FleetEngine.Trip(serializedBytes: trip.serializedBytes())
  }

  @Test("the sample Trip's vehicle waypoints are its remaining waypoints, one array")
  func sampleTripShares() throws {
    let sample = SampleTrips.fullyPopulated
    let trip = try roundTrip(sample)
    #expect(trip == sample)
    #expect(trip.vehicleWaypoints.count == 2)
    #expect(buffer(trip.vehicleWaypoints) == buffer(trip.remainingWaypoints))
  }

  @Test("a list that differs in one element keeps that element and equals what was sent")
  func partlyDifferentList() throws {
    var sample = SampleTrips.fullyPopulated
    sample.vehicleWaypoints[1].distanceMeters = 1
    sample.currentRouteSegmentEndPoint?.tripID = "another-trip"
    let trip = try roundTrip(sample)
    #expect(trip == sample)
    #expect(buffer(trip.vehicleWaypoints) != buffer(trip.remainingWaypoints))
    #expect(trip.vehicleWaypoints[1].distanceMeters == 1)
    #expect(trip.currentRouteSegmentEndPoint?.tripID == "another-trip")
  }

  @Test("a value equal by == but not byte for byte is decoded, not shared")
  func canonicallyEquivalentIsNotShared() throws {
    // Swift's == equates the precomposed and the decomposed é; the wire's bytes differ.
    var sample = SampleTrips.fullyPopulated
    sample.pickupPoint?.accessPointID = "caf\u{E9}"
    sample.dropoffPoint = sample.pickupPoint
    sample.dropoffPoint?.accessPointID = "cafe\u{301}"
    #expect(sample.dropoffPoint == sample.pickupPoint)
    let trip = try roundTrip(sample)
    #expect(Array(trip.pickupPoint?.accessPointID.utf8 ?? "".utf8) == [0x63, 0x61, 0x66, 0xC3, 0xA9])
    #expect(
      Array(trip.dropoffPoint?.accessPointID.utf8 ?? "".utf8) == [0x63, 0x61, 0x66, 0x65, 0xCC, 0x81])
  }

  @Test("a route and traffic equal to the first remaining waypoint's path and traffic share them")
  func routeSharesFirstWaypointPath() throws {
    var sample = SampleTrips.fullyPopulated
    // As Fleet Engine (and fleet-sim) send them: the route leads to the first waypoint.
    sample.route = sample.remainingWaypoints[0].pathToWaypoint
    sample.currentRouteSegmentTraffic = sample.remainingWaypoints[0].trafficToWaypoint
    let trip = try roundTrip(sample)
    #expect(trip == sample)
    #expect(trip.route.count == 12)
    #expect(buffer(trip.route) == buffer(trip.remainingWaypoints[0].pathToWaypoint))
    let traffic = try #require(trip.currentRouteSegmentTraffic)
    #expect(traffic.speedReadingInterval.count == 4)
    #expect(
      buffer(traffic.speedReadingInterval)
        == buffer(trip.remainingWaypoints[0].trafficToWaypoint?.speedReadingInterval ?? []))
  }

  @Test("a route that differs from the first waypoint's path in its last point is what was sent")
  func routeDifferingFromPathIsDecoded() throws {
    var sample = SampleTrips.fullyPopulated
    sample.route = sample.remainingWaypoints[0].pathToWaypoint
    sample.route[11].longitude += 0.0001
    sample.currentRouteSegmentTraffic = sample.remainingWaypoints[0].trafficToWaypoint
    sample.currentRouteSegmentTraffic?.speedReadingInterval[3].speed = .trafficJam
    let trip = try roundTrip(sample)
    #expect(trip == sample)
    #expect(buffer(trip.route) != buffer(trip.remainingWaypoints[0].pathToWaypoint))
    #expect(trip.route[11] == sample.route[11])
    #expect(trip.currentRouteSegmentTraffic?.speedReadingInterval[3].speed == .trafficJam)
  }

  /// The sample with its waypoints at its stops, and the end point of the current route
  /// segment as fleet-sim sends it: the first waypoint's location, trip and type only.
  func waypointsAtStops() -> FleetEngine.Trip {
    var sample = SampleTrips.fullyPopulated
    // Every TerminalLocation of the sample has one place ID: give the stops their own, so
    // that a waypoint's place ID buffer can only be its own stop's.
    for (stop, place) in [
      (\FleetEngine.Trip.pickupPoint, "ChIJ-pickup-place-0000000001"),
      (\FleetEngine.Trip.dropoffPoint, "ChIJ-dropoff-place-000000002"),
    ] {
      var id = FleetEngine.TerminalPointId()
      id.id = .placeID(place)
      id.value = place
      sample[keyPath: stop]?.terminalPointID = id
    }
    sample.remainingWaypoints[0].location = sample.pickupPoint
    sample.remainingWaypoints[1].location = sample.dropoffPoint
    sample.vehicleWaypoints = sample.remainingWaypoints
    var end = FleetEngine.TripWaypoint()
    end.location = sample.pickupPoint
    end.tripID = sample.remainingWaypoints[0].tripID
    end.waypointType = sample.remainingWaypoints[0].waypointType
    sample.currentRouteSegmentEndPoint = end
    return sample
  }

  /// The address of the UTF-8 buffer of `location`'s place ID (a long string, stored out of
  /// line).
  func placeIDBuffer(_ location: FleetEngine.TerminalLocation?) throws -> UnsafeRawPointer? {
    let id = try #require(location?.terminalPointID)
    guard case .placeID(let place)? = id.id else {
      Issue.record("the location has no place ID")
      return nil
    }
    return place.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) }
      ?? nil
  }

  @Test("a waypoint's location equal to the pickup or drop-off point is it, its strings shared")
  func waypointLocationSharesStop() throws {
    let sample = waypointsAtStops()
    let trip = try roundTrip(sample)
    #expect(trip == sample)
    #expect(trip.remainingWaypoints[0].location == trip.pickupPoint)
    #expect(trip.remainingWaypoints[1].location == trip.dropoffPoint)
    #expect(trip.currentRouteSegmentEndPoint?.location == trip.pickupPoint)
    let pickup = try placeIDBuffer(trip.pickupPoint)
    let dropoff = try placeIDBuffer(trip.dropoffPoint)
    #expect(pickup != nil)
    #expect(dropoff != nil)
    #expect(pickup != dropoff)
    #expect(try placeIDBuffer(trip.remainingWaypoints[0].location) == pickup)
    #expect(try placeIDBuffer(trip.remainingWaypoints[1].location) == dropoff)
    #expect(try placeIDBuffer(trip.currentRouteSegmentEndPoint?.location) == pickup)
  }

  @Test("a waypoint's location that differs from the pickup point in one string is what was sent")
  func waypointLocationDifferingIsDecoded() throws {
    var sample = waypointsAtStops()
    sample.remainingWaypoints[0].location?.accessPointID = "access-2"
    let trip = try roundTrip(sample)
    #expect(trip == sample)
    #expect(trip.remainingWaypoints[0].location?.accessPointID == "access-2")
    #expect(trip.remainingWaypoints[0].location != trip.pickupPoint)
    #expect(trip.remainingWaypoints[0].location?.point == sample.pickupPoint?.point)
  }
}
