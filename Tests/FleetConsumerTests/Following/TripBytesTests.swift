import FleetProtos
import Testing

@testable import FleetConsumer

/// The byte paths that read a trip or a feed update without unpacking it (``TopLevel``,
/// ``FeedUpdate``, other trips' stops) against what decoding the same bytes whole says.
@Suite("Reading a trip's or an update's bytes agrees with decoding them whole")
struct TripBytesTests {
  /// A varint field numbered 0x2000_0000 (above the 0x1FFF_FFFF protobuf allows), value 1:
  /// its key takes 5 bytes. protobuf-c keeps it as an unknown field.
  private static let highNumberedField: [UInt8] = [0x80, 0x80, 0x80, 0x80, 0x10, 0x01]

  private static func waypoint(_ trip: String, eta seconds: Int64) -> FleetEngine.TripWaypoint {
    var waypoint = FleetEngine.TripWaypoint()
    waypoint.tripID = trip
    var eta = GoogleProtobuf.Timestamp()
    eta.seconds = seconds
    waypoint.eta = eta
    return waypoint
  }

  /// A shared trip whose vehicle stops first for trip "other", then for "own".
  private static var shared: FleetEngine.Trip {
    var trip = FleetEngine.Trip()
    trip.remainingWaypoints = [waypoint("other", eta: 1_000), waypoint("own", eta: 2_000)]
    trip.vehicleWaypoints = trip.remainingWaypoints
    var eta = GoogleProtobuf.Timestamp()
    eta.seconds = 1_000
    trip.etaToFirstWaypoint = eta
    var remaining = GoogleProtobuf.Duration()
    remaining.seconds = 100
    trip.remainingTimeToFirstWaypoint = remaining
    return trip
  }

  /// `bytes` merged into an empty follower with other trips' stops hidden from trip "own".
  private static func followed(_ bytes: [UInt8]) throws -> FleetEngine.Trip? {
    var followed = FollowedTrip()
    _ = try bytes.withUnsafeBytes { raw in
      try followed.received(bytes: raw, current: true, ownTripID: "own", hidesOtherTrips: true)
    }
    return followed.trip
  }

  /// Whether ``TopLevel/next(in:at:)`` reads every top-level field of `bytes`.
  private static func scans(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { raw in
      var offset = 0
      while offset < raw.count {
        guard TopLevel.next(in: raw, at: &offset) != nil else { return false }
      }
      return true
    }
  }

  @Test("a trip with a field numbered above 0x1FFF_FFFF is refused whole, so nothing is shown")
  func highFieldNumberRefused() throws {
    let bytes = Self.shared.serializedBytes() + Self.highNumberedField
    // protobuf-c keeps the field as unknown; the Swift values refuse it (ProtoUnknownFields).
    #expect(!Self.scans(bytes))
    #expect(throws: ProtoDecodingError.self) { try FleetEngine.Trip(serializedBytes: bytes) }
    #expect(throws: ProtoDecodingError.self) { try Self.followed(bytes) }
  }

  @Test("a waypoint with a field numbered above 0x1FFF_FFFF is refused whole")
  func highFieldNumberInWaypointRefused() throws {
    var trip = Self.shared
    trip.vehicleWaypoints = [Self.waypoint("own", eta: 2_000)]
    // A vehicle waypoint (field 20) for trip "other" that carries the high-numbered field.
    let other = Self.waypoint("other", eta: 1_000).serializedBytes() + Self.highNumberedField
    let bytes = trip.serializedBytes() + [0xA2, 0x01, UInt8(other.count)] + other
    #expect(throws: ProtoDecodingError.self) { try FleetEngine.Trip(serializedBytes: bytes) }
    #expect(throws: ProtoDecodingError.self) { try Self.followed(bytes) }
  }

  @Test("other trips' stops are hidden and the next-stop ETA is the trip's own")
  func otherTripsHidden() throws {
    let held = try #require(try Self.followed(Self.shared.serializedBytes()))
    #expect(held.remainingWaypoints.map(\.tripID) == ["own"])
    #expect(held.vehicleWaypoints.map(\.tripID) == ["own"])
    // The server's clock: ETA 1000 s less 100 s to go; the own stop's ETA 2000 s.
    #expect(held.etaToFirstWaypoint?.seconds == 2_000)
    #expect(held.remainingTimeToFirstWaypoint?.seconds == 1_100)
  }

  /// A `TripUpdate` holding `trip` after `key` and `length` (field 1's, possibly padded),
  /// then `sequence` 7.
  private static func update(key: [UInt8], length: [UInt8], trip: [UInt8]) -> [UInt8] {
    key + length + trip + [0x10, 0x07]
  }

  /// `count` as a varint padded to `size` bytes.
  private static func padded(_ count: Int, to size: Int) -> [UInt8] {
    precondition(count < 128 && size >= 1)
    guard size > 1 else { return [UInt8(count)] }
    return [UInt8(count) | 0x80] + Array(repeating: 0x80, count: size - 2) + [0x00]
  }

  /// What ``FeedUpdate/withTrip(in:_:)`` gives for `bytes`: the trip's bytes, or the error.
  /// The trip's bytes are decoded in `body`, as the follower does (withTrip leaves them to it).
  private static func withTrip(_ bytes: [UInt8]) -> Result<[UInt8]?, ProtoDecodingError> {
    bytes.withUnsafeBytes { raw in
      Result { () throws(ProtoDecodingError) in
        try FeedUpdate.withTrip(in: raw) { (trip) throws(ProtoDecodingError) in
          guard let trip else { return nil }
          _ = try FleetEngine.Trip(serializedBytes: trip)
          return Array(trip)
        }
      }
    }
  }

  @Test(
    "a trip's key or length prefix of 5 bytes is read, of 6 to 10 refused as the whole decode does",
    arguments: 1...10)
  func paddedPrefixes(size: Int) throws {
    let trip = Self.shared.serializedBytes()
    let inputs = [
      Self.update(key: [0x0A], length: Self.padded(trip.count, to: size), trip: trip),
      Self.update(key: Self.padded(0x0A, to: size), length: [UInt8(trip.count)], trip: trip),
    ]
    for bytes in inputs {
      let whole = Result { () throws(ProtoDecodingError) in
        try FleetFeed.TripUpdate(serializedBytes: bytes)
      }
      switch (whole, Self.withTrip(bytes)) {
      case (.success(let update), .success(let read)):
        #expect(size <= 5)
        #expect(update.sequence == 7)
        #expect(read == trip)
      case (.failure(let expected), .failure(let error)):
        #expect(size > 5)
        #expect(error == expected)
      case (let whole, let read):
        Issue.record("size \(size): whole decode \(whole), bytes read \(read)")
      }
    }
  }

  @Test(
    "withTrip gives the trip wherever it is, merges several occurrences, and refuses what the decode refuses",
    arguments: 0..<4)
  func tripOccurrences(case index: Int) throws {
    let trip = Self.shared.serializedBytes()
    let half = Array(trip.prefix(9))  // its first remaining waypoint's key, length and part
    let sequence: [UInt8] = [0x10, 0x07]
    let field: (([UInt8]) -> [UInt8]) = { [0x0A, UInt8($0.count)] + $0 }
    let bytes = [
      sequence + field(trip),  // the trip not first
      field(trip) + sequence + field(trip),  // two occurrences, merged by the decode
      sequence + [0x08, 0x01],  // the trip as a varint: a wrong wire type
      sequence + field(half),  // a trip that does not parse
    ][index]
    let whole = Result { () throws(ProtoDecodingError) in
      try FleetFeed.TripUpdate(serializedBytes: bytes)
    }
    switch (whole, Self.withTrip(bytes)) {
    case (.success(let update), .success(let read)):
      #expect(index < 2)
      // The bytes given decode to the trip the whole decode holds.
      let given = try FleetEngine.Trip(serializedBytes: try #require(read))
      #expect(given == update.trip)
    case (.failure(let expected), .failure(let error)):
      #expect(index >= 2)
      #expect(error == expected)
      #expect(error.message == FleetFeed.TripUpdate.protoMessageName)
      #expect(error.byteCount == bytes.count)
    case (let whole, let read):
      Issue.record("case \(index): whole decode \(whole), bytes read \(read)")
    }
  }

  @Test("TopLevel.next reads keys, lengths and values as protobuf-c frames them")
  func topLevelTable() {
    // (bytes, the fields read: number, wire type, payload; nil where it stops parsing)
    let table: [([UInt8], [(Int, UInt64, Range<Int>)?])] = [
      ([0x08, 0x96, 0x01], [(1, 0, 1..<3)]),
      ([0x0A, 0x02, 0x61, 0x62, 0x15, 1, 2, 3, 4], [(1, 2, 2..<4), (2, 5, 5..<9)]),
      ([0x19] + Array(repeating: 0, count: 8), [(3, 1, 1..<9)]),
      ([0x08] + Array(repeating: 0xFF, count: 9) + [0x01], [(1, 0, 1..<11)]),
      ([0x08] + Array(repeating: 0xFF, count: 10) + [0x01], [nil]),  // an 11-byte varint
      ([0xF8, 0xFF, 0xFF, 0xFF, 0x0F, 0x00], [(0x1FFF_FFFF, 0, 5..<6)]),
      (Self.highNumberedField, [nil]),
      ([0x8A, 0x80, 0x80, 0x80, 0x00, 0x00], [(1, 2, 6..<6)]),  // a 5-byte key
      ([0x8A, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00], [nil]),  // a 6-byte key
      ([0x0A, 0x80, 0x80, 0x80, 0x80, 0x00], [(1, 2, 6..<6)]),  // a 5-byte length
      ([0x0A, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], [nil]),  // a 6-byte length
      ([0x0A, 0x03, 0x61], [nil]),  // a length past the end
      ([0x00, 0x01], [nil]),  // field 0
      ([0x0B, 0x0C], [nil]),  // a group
      ([0x0D, 1, 2], [nil]),  // a fixed32 past the end
    ]
    for (bytes, expected) in table {
      var read: [(Int, UInt64, Range<Int>)?] = []
      bytes.withUnsafeBytes { raw in
        for field in TopLevel.fields(of: raw) {
          read.append(field.map { ($0.number, $0.wireType, $0.payload) })
        }
      }
      #expect(read.count == expected.count, "\(bytes)")
      for (got, want) in zip(read, expected) {
        #expect(got?.0 == want?.0 && got?.1 == want?.1 && got?.2 == want?.2, "\(bytes)")
      }
    }
  }
}
