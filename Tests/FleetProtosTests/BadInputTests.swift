import FleetProtos
import FleetProtosFixtures
import PeerSupport
import Testing

/// Hostile bytes never crash, hang or leak: each input either decodes or throws
/// ProtoDecodingError. (A crash would take the test process down; `.timeLimit` catches a
/// hang; leaks were checked once under valgrind, see README "Bad input".)
@Suite("Decoding bad input", .timeLimit(.minutes(2)))
struct BadInputTests {
  let valid = SampleTrips.fullyPopulated.serializedBytes()

  @Test("thousands of seeded random byte strings decode or throw")
  func randomBytes() {
    var random = FuzzRandom(seed: 0x5EED_F1EE7)
    var decoded = 0
    var rejected = 0
    for _ in 0..<5_000 {
      let count = Int(random.next() % 300)
      let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
      switch Result(catching: { () throws(ProtoDecodingError) in try FleetEngine.Trip(serializedBytes: bytes) }) {
      case .success: decoded += 1
      case .failure(let error):
        #expect(error.message == "maps.fleetengine.v1.Trip")
        #expect(error.byteCount == count)
        rejected += 1
      }
    }
    // Random bytes are almost never a valid Trip; both outcomes must have happened for the
    // test to have exercised anything.
    #expect(rejected > 4_000)
    #expect(decoded + rejected == 5_000)
  }

  @Test("seeded random corruptions of a valid Trip decode or throw")
  func corruptedTrips() {
    var random = FuzzRandom(seed: 42)
    var rejected = 0
    for _ in 0..<3_000 {
      let bytes = random.corrupted(valid)
      if (try? FleetEngine.Trip(serializedBytes: bytes)) == nil { rejected += 1 }
    }
    #expect(rejected > 0)
  }

  @Test("every truncation of a valid Trip decodes to less, or throws")
  func everyTruncation() throws {
    let full = try FleetEngine.Trip(serializedBytes: valid)
    #expect(full == SampleTrips.fullyPopulated)
    var rejected = 0
    for length in 0..<valid.count {
      do {
        // A cut that falls between two top-level fields is a valid, shorter Trip.
        let shorter = try FleetEngine.Trip(serializedBytes: Array(valid[..<length]))
        #expect(shorter != full, "a \(length)-byte prefix decoded to the whole trip")
      } catch {
        #expect(error.reason == .malformed)
        rejected += 1
      }
    }
    #expect(rejected > valid.count / 2)
  }

  @Test(
    "wrong wire types for known fields are rejected",
    arguments: [
      ("name (string) sent as a varint", [0x08, 0x01]),
      ("trip_status (enum) sent length-delimited", [0x1A, 0x01, 0x00]),
      ("pickup_point (message) sent as a varint", [0x28, 0x05]),
      ("number_of_passengers (int32) sent as fixed64", [0x51, 1, 2, 3, 4, 5, 6, 7, 8]),
    ] as [(String, [UInt8])])
  func wrongWireType(_ what: String, _ bytes: [UInt8]) {
    #expect(throws: ProtoDecodingError.self, "\(what)") {
      try FleetEngine.Trip(serializedBytes: bytes)
    }
  }

  @Test("a bool sent as fixed32 is read leniently by protobuf-c, not rejected")
  func lenientBool() throws {
    // protobuf-c does not check the wire type of bool fields; Google's parsers would keep the
    // field as unknown instead. Either way nothing crashes and the bytes are consumed whole.
    let trip = try FleetEngine.Trip(serializedBytes: [0xD5, 0x01, 1, 0, 0, 0])
    #expect(trip.lastLocationSnappable == true)
  }

  @Test(
    "lengths and varints that overrun the input are rejected",
    arguments: [
      ("name claims 2^31 bytes", [0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0x61, 0x62]),
      ("name claims 10 bytes, has 3", [0x0A, 0x0A, 0x61, 0x62, 0x63]),
      ("varint of 11 bytes", [0x50] + Array(repeating: 0xFF, count: 10) + [0x01]),
      ("varint cut short", [0x50, 0xFF, 0xFF]),
      ("tag cut short", [0xFF]),
      ("field number 0", [0x00, 0x01]),
      ("nested route point claims more than its parent holds", [0x4A, 0x02, 0x09, 0x7F]),
    ] as [(String, [UInt8])])
  func overrunningLengths(_ what: String, _ bytes: [UInt8]) {
    #expect(throws: ProtoDecodingError.self, "\(what)") {
      try FleetEngine.Trip(serializedBytes: bytes)
    }
  }

  // Found by `scripts/fuzz proto-decode`: protobuf-c checks only a tag's first byte for field
  // 0, and kept as an unknown field it re-encoded into bytes no parser accepts.
  @Test(
    "field numbers outside 1...2^29-1 are rejected however the tag is written",
    arguments: [
      ("field 0 in a two-byte tag", [0x80, 0x00, 0x01]),
      ("field 0 in a nested message", [0x2A, 0x03, 0x80, 0x00, 0x01]),
      ("a five-byte tag past 2^29 - 1", [0xF8, 0xFF, 0xFF, 0xFF, 0x7F, 0x01]),
    ] as [(String, [UInt8])])
  func invalidFieldNumbers(_ what: String, _ bytes: [UInt8]) {
    #expect(throws: ProtoDecodingError(message: "maps.fleetengine.v1.Trip", reason: .malformed, byteCount: bytes.count), "\(what)") {
      try FleetEngine.Trip(serializedBytes: bytes)
    }
  }

  @Test("the largest field number is kept as an unknown field and re-encoded as it came")
  func largestFieldNumber() throws {
    let bytes: [UInt8] = [0xF8, 0xFF, 0xFF, 0xFF, 0x0F, 0x01]  // field 2^29 - 1, varint 1
    let trip = try FleetEngine.Trip(serializedBytes: bytes)
    #expect(trip.unknownFields.fields.map(\.number) == [(1 << 29) - 1])
    #expect(trip.serializedBytes() == bytes)
  }

  @Test("a string field that is not UTF-8 is rejected with invalidUTF8")
  func invalidUTF8() {
    // Field 1 (name), 3 bytes: 'a', then 0xC3 0x28, an invalid two-byte sequence.
    let bytes: [UInt8] = [0x0A, 0x03, 0x61, 0xC3, 0x28]
    #expect(throws: ProtoDecodingError(message: "maps.fleetengine.v1.Trip", reason: .invalidUTF8, byteCount: 5)) {
      try FleetEngine.Trip(serializedBytes: bytes)
    }
  }

  @Test("a nested string that is not UTF-8 is rejected, reported against the outer message")
  func nestedInvalidUTF8() {
    // Field 5 (pickup_point) holding TerminalLocation field 4 (trip_id) = 0xFF.
    let bytes: [UInt8] = [0x2A, 0x03, 0x22, 0x01, 0xFF]
    #expect(throws: ProtoDecodingError(message: "maps.fleetengine.v1.Trip", reason: .invalidUTF8, byteCount: 5)) {
      try FleetEngine.Trip(serializedBytes: bytes)
    }
  }

  @Test("empty input is the default message")
  func emptyInput() throws {
    #expect(try FleetEngine.Trip(serializedBytes: []) == FleetEngine.Trip())
  }
}
