import FleetProtos
import FleetProtosFixtures
import Testing

/// A decode builds each long string (more than 15 UTF-8 bytes, which Swift stores out of
/// line) once and hands the same bytes met again in the same message tree the same String
/// (ProtoDecodeStrings): equal values, one buffer.
@Suite("Decoding shares repeated long strings")
struct DecodeStringsTests {
  /// The address of a native string's UTF-8 buffer; small strings have none to share.
  func buffer(_ s: String) -> UnsafeRawPointer? {
    s.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil
  }

  @Test("the sample Trip's place IDs and encoded paths decode into one buffer each")
  func sampleTripShares() throws {
    let sample = SampleTrips.fullyPopulated
    let trip = try FleetEngine.Trip(serializedBytes: sample.serializedBytes())
    #expect(trip == sample)
    let pickupID = try #require(trip.pickupPoint?.terminalPointID)
    let dropoffID = try #require(trip.dropoffPoint?.terminalPointID)
    guard case .placeID(let pickupPlace)? = pickupID.id, case .placeID(let dropoffPlace)? = dropoffID.id
    else {
      Issue.record("the sample's terminal point IDs have no place ID")
      return
    }
    #expect(pickupID.value.utf8.count > 15)
    let shared = buffer(pickupID.value)
    #expect(shared != nil)
    #expect(buffer(pickupPlace) == shared)
    #expect(buffer(dropoffID.value) == shared)
    #expect(buffer(dropoffPlace) == shared)
    let paths = (trip.remainingWaypoints + trip.vehicleWaypoints).map(\.encodedPathToWaypoint)
    #expect(paths.count == 4)
    #expect(paths[0].utf8.count > 15)
    #expect(Set(paths.map(buffer)).count == 1)
  }

  @Test("long strings of one length but other bytes stay apart, past four at a time")
  func distinctStringsStayDistinct() throws {
    // Six keys of 20 bytes differing only in their last byte, then the first ones again, once
    // the four remembered strings have moved on past them.
    let keys = (0..<6).map { "attribute-key-00000\($0)" } + ["attribute-key-000000", "attribute-key-000001"]
    var sample = FleetEngine.Trip()
    sample.attributes = keys.map { key in
      var a = FleetEngine.TripAttribute()
      a.key = key
      a.tripAttributeValue = .stringValue(key + "-value")
      return a
    }
    let trip = try FleetEngine.Trip(serializedBytes: sample.serializedBytes())
    #expect(trip.attributes.map(\.key) == keys)
    #expect(trip == sample)
  }

  @Test("a long string that is not UTF-8 is rejected even after a valid one of its length")
  func invalidAfterValid() {
    // Field 1 (name): 16 x "a"; then field 2 (vehicle_id): 15 x "a" and 0xFF.
    let valid = [UInt8](repeating: 0x61, count: 16)
    let invalid = [UInt8](repeating: 0x61, count: 15) + [0xFF]
    let bytes: [UInt8] = [0x0A, 16] + valid + [0x12, 16] + invalid
    #expect(
      throws: ProtoDecodingError(
        message: "maps.fleetengine.v1.Trip", reason: .invalidUTF8, byteCount: bytes.count)
    ) {
      try FleetEngine.Trip(serializedBytes: bytes)
    }
  }
}
