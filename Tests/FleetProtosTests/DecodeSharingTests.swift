import FleetProtos
import FleetProtosFixtures
import Testing

/// A field of a copy-on-write message type is compared, in place, with the fields of its
/// type decoded before it in the same message; when it decodes to exactly the same value it
/// shares theirs (a Trip's vehicle waypoints are usually its remaining waypoints).
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
}
