import FleetProtos
import FleetProtosFixtures
import Foundation
import GRPCTestingProtos
import PeerSupport
import Testing

/// Our encode writes the Swift value straight into the buffer (ProtoWriter); protobuf-c stays
/// the codec of record, so its pack of the same value's C struct tree must give the same bytes,
/// byte for byte, for every message we send or re-send.
@Suite("Direct encode: the bytes protobuf-c packs")
struct DirectEncodeTests {
  /// protobuf-c's pack of `message`, through the C struct tree.
  func packedByProtobufC<M: CBridgedMessage>(_ message: M) -> [UInt8] {
    var bytes: [UInt8] = []
    message.encodeThroughC(appendingTo: &bytes)
    return bytes
  }

  /// Decodes `bytes` as `type`; when they are one, our encoding of the value must be
  /// protobuf-c's. Returns whether they decoded.
  func expectSameBytes(_ type: any ProtoMessage.Type, _ bytes: [UInt8], _ what: String) -> Bool {
    func check<M: ProtoMessage>(_: M.Type) -> Bool {
      guard let value = try? M(serializedBytes: bytes) else { return false }
      let ours = value.serializedBytes()
      guard let bridged = value as? any CBridgedMessage else {
        Issue.record("\(M.protoMessageName) is not bridged to protobuf-c")
        return true
      }
      #expect(ours == packedByProtobufC(bridged), "\(what) as \(M.protoMessageName)")
      return true
    }
    return check(type)
  }

  @Test("the fully populated sample Trip: our encode is protobuf-c's pack")
  func sampleTrip() {
    let trip = SampleTrips.fullyPopulated
    let ours = trip.serializedBytes()
    #expect(ours.count > 4_000)
    #expect(ours == packedByProtobufC(trip))
    // Appended after bytes already in a buffer, as a gRPC frame's prefix is.
    var buffer: [UInt8] = [0, 0, 0, 0, 0]
    trip.encode(appendingTo: &buffer)
    #expect(Array(buffer[5...]) == ours)
  }

  @Test("every seed of the proto-decode and status-details fuzz corpora, as every peer type")
  func fuzzCorpora() throws {
    let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../Fuzz/Corpus").standardized
    var decoded = 0
    for name in ["proto-decode", "status-details"] {
      let folder = corpus.appendingPathComponent(name)
      let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
      #expect(!files.isEmpty, "no seeds in \(folder.path)")
      for file in files {
        let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(file)))
        guard bytes.count > 1 else { continue }
        // Both corpora start with a selector byte; the rest is tried as every peer type.
        let message = Array(bytes[1...])
        for type in PeerMessageTypes.all where expectSameBytes(type, message, "\(name)/\(file)") {
          decoded += 1
        }
      }
    }
    #expect(decoded > 100)
  }

  @Test("seeded random corruptions of the Trip that still decode encode as protobuf-c packs")
  func corruptedTrips() {
    let valid = SampleTrips.fullyPopulated.serializedBytes()
    var random = FuzzRandom(seed: 37)
    var decoded = 0
    for _ in 0..<3_000 {
      if expectSameBytes(FleetEngine.Trip.self, random.corrupted(valid), "corruption") {
        decoded += 1
      }
    }
    #expect(decoded > 100)
  }

  @Test("protobuf-c's edge cases: NUL in strings, negative int32, -0.0, zero wrappers, maps")
  func edgeCases() {
    var trip = FleetEngine.Trip()
    trip.name = "providers/p/trips/t\u{0}after the NUL"  // protobuf-c's strlen stops at NUL
    trip.vehicleID = "\u{0}only a NUL first"  // proto3: nothing before the NUL, left out
    trip.numberOfPassengers = -3  // ten bytes, sign-extended
    trip.remainingDistanceMeters = 0  // a present wrapper holding zero: tag and length 0
    trip.tripStatus = .unrecognized(-7)
    var odd = GoogleType.LatLng()
    odd.latitude = -0.0  // zero to protobuf-c: left out
    odd.longitude = .nan
    trip.route = [GoogleType.LatLng(), odd]
    trip.unknownFields.fields = [.init(number: 1_000, wireType: 0, bytes: [0x2A])]
    #expect(trip.serializedBytes() == packedByProtobufC(trip))

    var info = GoogleRPC.ErrorInfo()
    info.reason = "QUOTA"
    info.metadata = ["": "empty key", "zone": "", "b": "2", "a": "1"]
    #expect(info.serializedBytes() == packedByProtobufC(info))

    var request = GRPCTesting.SimpleRequest()
    request.responseSize = -1
    request.fillUsername = true
    request.payload = GRPCTesting.Payload()
    request.payload?.body = [0, 1, 2, 0]
    #expect(request.serializedBytes() == packedByProtobufC(request))

    var reconnect = GRPCTesting.ReconnectInfo()
    reconnect.passed = true
    reconnect.backoffMs = [0, 1, 300, -1, .max]  // packed, a negative one ten bytes long
    #expect(reconnect.serializedBytes() == packedByProtobufC(reconnect))

    var configure = GRPCTesting.ClientConfigureRequest()
    configure.types = [.unaryCall, .emptyCall, .unrecognized(-2)]  // packed enums
    #expect(configure.serializedBytes() == packedByProtobufC(configure))

    var report = GRPCTesting.TestOrcaReport()
    report.requestCost = ["b": 0, "a": -0.5, "": .infinity]  // map<string, double>
    #expect(report.serializedBytes() == packedByProtobufC(report))
  }
}
