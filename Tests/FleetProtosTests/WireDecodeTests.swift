@_spi(GeneratedCode) import FleetProtos
import FleetProtosFixtures
import GRPCTestingProtos
import PeerSupport
@_spi(GeneratedCode) import ProtoRuntime
import Testing

/// The decode straight from the wire gives protobuf-c's values and verdicts (its unpack with
/// the bridge, `decodeThroughC`, is the codec of record): on the bad-input corpora, on every
/// message type a peer can send, and on the cases where protobuf-c's rules are its own.
@Suite("Decoding straight from the wire agrees with protobuf-c", .timeLimit(.minutes(2)))
struct WireDecodeTests {
  let valid = SampleTrips.fullyPopulated.serializedBytes()

  /// Checks every input as a Trip; how many decoded straight and how many protobuf-c accepted.
  func agree(_ inputs: [[UInt8]]) -> (straight: Int, accepted: Int) {
    var counts = (straight: 0, accepted: 0)
    for bytes in inputs {
      let verdict = WireDecodeCheck.check(FleetEngine.Trip.self, bytes)
      #expect(verdict.problem == nil, "\(bytes)")
      if verdict.straight { counts.straight += 1 }
      if verdict.accepted { counts.accepted += 1 }
    }
    return counts
  }

  @Test("the sample Trip decodes straight, to the value sent")
  func sampleTrip() throws {
    var strings = ProtoDecodeStrings()
    let trip = try valid.withUnsafeBytes { (raw) throws(ProtoDecodingError) in
      try FleetEngine.Trip(wireBytes: raw, strings: &strings)
    }
    #expect(trip == SampleTrips.fullyPopulated)
    #expect(WireDecodeCheck.check(FleetEngine.Trip.self, valid).problem == nil)
  }

  @Test("5,000 seeded random byte strings: the same verdicts")
  func randomBytes() {
    var random = FuzzRandom(seed: 0x5EED_F1EE7)
    let inputs = (0..<5_000).map { _ in
      (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }
    let counts = agree(inputs)
    #expect(counts.accepted > 0)
  }

  @Test("3,000 corruptions and every truncation of the sample Trip: the same values and verdicts")
  func corruptionsAndTruncations() {
    var random = FuzzRandom(seed: 42)
    let corrupted = (0..<3_000).map { _ in random.corrupted(valid) }
    let truncated = (0...valid.count).map { Array(valid[..<$0]) }
    let counts = agree(corrupted + truncated)
    // Truncations between top-level fields are valid Trips; nearly all decode straight.
    #expect(counts.accepted > valid.count / 4)
    #expect(counts.straight > counts.accepted / 2)
  }

  @Test("every message type a peer can send: random bytes and corruptions of a real one")
  func everyPeerType() {
    var random = FuzzRandom(seed: 7)
    let tripBytes = valid
    for type in PeerMessageTypes.all {
      guard let bridged = type as? any CBridgedMessage.Type else {
        Issue.record("\(type) is not bridged")
        continue
      }
      for _ in 0..<200 {
        let bytes =
          random.next() % 2 == 0
          ? random.corrupted(tripBytes)
          : (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let verdict = WireDecodeCheck.check(bridged, bytes)
        #expect(verdict.problem == nil, "\(type): \(bytes)")
      }
    }
  }

  @Test(
    "protobuf-c's own rules: merges, oneofs, packing, bools, strings, lengths",
    arguments: [
      (
        "pickup_point twice: protobuf-c merges them",
        [0x2A, 0x02, 0x22, 0x00, 0x2A, 0x02, 0x32, 0x00]
      ),
      (
        "pickup_point twice, each with a trip ID",
        [0x2A, 0x03, 0x22, 0x01, 0x61, 0x2A, 0x03, 0x22, 0x01, 0x62]
      ),
      // last_location = 11; its heading (an Int32Value) = 2.
      ("last_location twice, the second empty", [0x5A, 0x02, 0x12, 0x00, 0x5A, 0x00]),
      (
        "last_location twice, each with a heading: protobuf-c merges them",
        [0x5A, 0x04, 0x12, 0x02, 0x08, 0x05, 0x5A, 0x04, 0x12, 0x02, 0x08, 0x07]
      ),
      (
        "vehicle_waypoints twice, the second empty",
        [0xA2, 0x01, 0x02, 0x08, 0x01, 0xA2, 0x01, 0x00]
      ),
      ("name twice: the last wins", [0x0A, 0x01, 0x61, 0x0A, 0x01, 0x62]),
      ("a name that is not UTF-8, then a valid one", [0x0A, 0x01, 0xFF, 0x0A, 0x01, 0x62]),
      ("a name with a NUL, then bytes that are not UTF-8", [0x0A, 0x03, 0x61, 0x00, 0xFF]),
      ("a name claiming 2^32 bytes", [0x0A, 0x80, 0x80, 0x80, 0x80, 0x10, 0x61]),
      ("last_location_snappable as a varint of 0x80 0x00", [0xD0, 0x01, 0x80, 0x00]),
      (
        "last_location_snappable as fixed64 of 0x80s",
        [0xD1, 0x01] + Array(repeating: 0x80, count: 8)
      ),
      ("last_location_snappable length-delimited", [0xD2, 0x01, 0x00]),
      ("trip_status as a 10-byte varint", [0x18] + Array(repeating: 0xFF, count: 9) + [0x01]),
      ("number_of_passengers negative", [0x50] + Array(repeating: 0xFF, count: 9) + [0x01]),
      (
        "an unknown varint, fixed64, bytes and fixed32",
        [0xC0, 0x3E, 0x2A, 0xC1, 0x3E, 1, 2, 3, 4, 5, 6, 7, 8, 0xC2, 0x3E, 0x01, 0x61]
          + [0xC5, 0x3E, 1, 2, 3, 4]
      ),
    ] as [(String, [UInt8])])
  func protobufCRules(_ what: String, _ bytes: [UInt8]) {
    #expect(WireDecodeCheck.check(FleetEngine.Trip.self, bytes).problem == nil, "\(what)")
  }

  @Test(
    "a oneof seen twice",
    arguments: [
      // TerminalPointId: oneof id { place_id = 2; generated_id = 3 }, value = 4.
      ("place_id then generated_id", [0x12, 0x01, 0x61, 0x1A, 0x01, 0x62]),
      ("place_id twice", [0x12, 0x01, 0x61, 0x12, 0x01, 0x62]),
      ("generated_id then place_id, not UTF-8 first", [0x1A, 0x01, 0xFF, 0x12, 0x01, 0x62]),
    ] as [(String, [UInt8])])
  func oneofs(_ what: String, _ bytes: [UInt8]) {
    let verdict = WireDecodeCheck.check(FleetEngine.TerminalPointId.self, bytes)
    #expect(verdict.problem == nil, "\(what)")
    #expect(verdict.accepted, "\(what)")
  }

  @Test(
    "repeated scalars packed, unpacked and mixed, and bools: the straight decode agrees",
    arguments: [
      // grpc.testing.ReconnectInfo: bool passed = 1; repeated int32 backoff_ms = 2.
      ("packed", [0x12, 0x04, 0x01, 0x02, 0x96, 0x01] as [UInt8], true),
      ("unpacked", [0x10, 0x01, 0x10, 0x02, 0x10, 0x96, 0x01], true),
      ("mixed", [0x10, 0x01, 0x12, 0x02, 0x02, 0x03, 0x10, 0x04], true),
      ("packed, empty", [0x12, 0x00], true),
      ("packed negative: ten bytes", [0x12, 0x0A] + [UInt8](repeating: 0xFF, count: 9) + [1], true),
      ("packed run ending inside a varint", [0x12, 0x02, 0x01, 0x80], false),
      ("a bool of 2", [0x08, 0x02], true),
      ("a bool of 0x80 0x00", [0x08, 0x80, 0x00], true),
      ("a bool as fixed32", [0x0D, 0x01, 0x00, 0x00, 0x00], true),
    ] as [(String, [UInt8], Bool)])
  func repeatedScalars(_ what: String, _ bytes: [UInt8], _ protobufCAccepts: Bool) {
    let verdict = WireDecodeCheck.check(GRPCTesting.ReconnectInfo.self, bytes)
    #expect(verdict.problem == nil, "\(what)")
    #expect(verdict.accepted == protobufCAccepts, "\(what)")
  }

  @Test("a repeated enum packed and unpacked: the straight decode agrees")
  func repeatedEnums() {
    // grpc.testing.ClientConfigureRequest: repeated RpcType types = 1 (0, 1 and unknown 5).
    for bytes: [UInt8] in [[0x0A, 0x03, 0x00, 0x01, 0x05], [0x08, 0x01, 0x08, 0x05, 0x08, 0x00]] {
      let verdict = WireDecodeCheck.check(GRPCTesting.ClientConfigureRequest.self, bytes)
      #expect(verdict.problem == nil, "\(bytes)")
      #expect(verdict.accepted, "\(bytes)")
    }
  }

  @Test("google.rpc.Status details, wrappers and a field mask: the straight decode agrees")
  func wellKnownTypes() {
    let inputs: [(any CBridgedMessage.Type, [UInt8])] = [
      // Int32Value's value twice (the last wins), a bool wrapper whose varint is 2.
      (GoogleProtobuf.Int32Value.self, [0x08, 0x05, 0x08, 0x07]),
      (GoogleProtobuf.BoolValue.self, [0x08, 0x02]),
      (GoogleProtobuf.FieldMask.self, [0x0A, 0x01, 0x61, 0x0A, 0x01, 0x62]),
      (GoogleRPC.Status.self, [0x08, 0x05, 0x1A, 0x02, 0x0A, 0x00, 0x1A, 0x00]),
      // remaining_distance_meters (12), an Int32Value, twice in a Trip: merged by protobuf-c.
      (FleetEngine.Trip.self, [0x62, 0x02, 0x08, 0x01, 0x62, 0x02, 0x08, 0x07]),
      (FleetEngine.Trip.self, [0x62, 0x02, 0x08, 0x01, 0x62, 0x00]),
    ]
    for (type, bytes) in inputs {
      #expect(WireDecodeCheck.check(type, bytes).problem == nil, "\(type): \(bytes)")
    }
  }

  @Test("varints of 1 to 11 bytes, at the end and with 9 bytes after: protobuf-c's values")
  func varintLengths() {
    // google.protobuf.Timestamp: int64 seconds = 1, int32 nanos = 2 (its low 32 bits).
    var inputs: [[UInt8]] = []
    for length in 1...11 {
      for last: UInt8 in [0x00, 0x01, 0x7F] {
        for body: UInt8 in [0x80, 0xFF, 0xAA] {
          let varint = [UInt8](repeating: body, count: length - 1) + [last]
          for field: UInt8 in [0x08, 0x10] {
            inputs.append([field] + varint)
            inputs.append([field] + varint + [0x10, 0x01, 0x1D, 1, 2, 3, 4, 0x20, 0x05])
          }
        }
      }
    }
    var accepted = 0
    for bytes in inputs {
      let verdict = WireDecodeCheck.check(GoogleProtobuf.Timestamp.self, bytes)
      #expect(verdict.problem == nil, "\(bytes)")
      if verdict.straight { accepted += 1 }
    }
    // Lengths 1 to 10 decode straight; 11 bytes are refused.
    #expect(accepted == inputs.count * 10 / 11)
  }

  @Test("LatLng: both fields in order, reordered, one left out, repeated or unknown agree")
  func latLngLayouts() {
    let lat: [UInt8] = [0x09, 1, 2, 3, 4, 5, 6, 0xF0, 0x3F]
    let lng: [UInt8] = [0x11, 8, 7, 6, 5, 4, 3, 0x20, 0xC0]
    let inputs: [[UInt8]] = [
      lat + lng, lng + lat, lat, lng, lat + lat, lat + lng + [0x18, 0x01],
      [0x0D, 1, 2, 3, 4] + lng + [0, 0, 0, 0], lat + [0x12, 0x07, 1, 2, 3, 4, 5, 6, 7],
      Array((lat + lng)[..<17]), [0x09] + Array(repeating: 0, count: 17),
    ]
    var straight = 0
    for bytes in inputs {
      let verdict = WireDecodeCheck.check(GoogleType.LatLng.self, bytes)
      #expect(verdict.problem == nil, "\(bytes)")
      if verdict.straight { straight += 1 }
    }
    #expect(straight == 6)
  }

  @Test("paths in the LatLng layout broken by other forms, routes sharing them or not: agree")
  func latLngRuns() throws {
    func point(_ i: Int) -> GoogleType.LatLng {
      var p = GoogleType.LatLng()
      (p.latitude, p.longitude) = (52 + Double(i) / 1000, 13 - Double(i) / 1000)
      return p
    }
    var half = GoogleType.LatLng()  // the longitude alone: 9 bytes, not the layout
    half.longitude = 13
    var unknown = point(99)  // the layout's 18 bytes and 2 more
    unknown.unknownFields.fields.append(.init(number: 3, wireType: 0, bytes: [1]))
    // 18 bytes with the run's header but not its layout: the fields reversed (11 x 09 y), or
    // the latitude twice (09 x 09 y, the last wins). The second field goes out as unknown.
    func fixed64(_ value: Double) -> [UInt8] {
      withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) }
    }
    var reversed = GoogleType.LatLng()
    reversed.longitude = 13.5
    reversed.unknownFields.fields.append(.init(number: 1, wireType: 1, bytes: fixed64(52.5)))
    var repeated = GoogleType.LatLng()
    repeated.latitude = 52.25
    repeated.unknownFields.fields.append(.init(number: 1, wireType: 1, bytes: fixed64(52.75)))
    let run = (0..<6).map(point)
    let paths: [[GoogleType.LatLng]] = [
      (0..<20).map(point), [GoogleType.LatLng()] + run, run + [half] + run, [unknown] + run,
      run + [unknown, half] + run.reversed(), [reversed] + run + [repeated] + run,
      [repeated] + run + [reversed] + run,
    ]
    for (odd, tags) in [(reversed, [0x11, 0x09]), (repeated, [0x09, 0x09])] as [(_, [UInt8])] {
      let bytes = odd.serializedBytes()
      try #require(bytes.count == 18 && [bytes[0], bytes[9]] == tags)
    }
    var inputs: [[UInt8]] = []
    for path in paths {
      var waypoint = FleetEngine.TripWaypoint()
      waypoint.tripID = "trip-1"
      waypoint.pathToWaypoint = path
      for route in [path, Array(path.dropLast()), path + [point(7)], path.map { _ in point(1) }] {
        var trip = FleetEngine.Trip()
        trip.remainingWaypoints = [waypoint, waypoint]
        trip.route = route
        let bytes = trip.serializedBytes()
        inputs.append(bytes)
        // The route (field 9, first on the wire) with its first tag in two bytes: the same
        // field, not the layout.
        try #require(bytes.first == 0x4A)
        inputs.append([0xCA, 0x00] + bytes.dropFirst())
      }
      // The waypoint with the tag of its path's first or second element (field 4, after its
      // 8 bytes of trip ID) in two bytes.
      let encoded = waypoint.serializedBytes()
      try #require(encoded[8] == 0x22)
      for at in [8, 10 + Int(encoded[9])] {
        let inner = Array(encoded[..<at]) + [0xA2, 0x00] + encoded[(at + 1)...]
        inputs.append([0x82, 0x01] + varint(inner.count) + inner)
      }
    }
    for bytes in inputs {
      let verdict = WireDecodeCheck.check(FleetEngine.Trip.self, bytes)
      #expect(verdict.problem == nil, "\(bytes)")
      #expect(verdict.straight, "\(bytes)")
    }
  }

  private func varint(_ value: Int) -> [UInt8] {
    var (value, bytes) = (value, [UInt8]())
    while value >= 0x80 {
      bytes.append(UInt8(value & 0x7F) | 0x80)
      value >>= 7
    }
    return bytes + [UInt8(value)]
  }
}
