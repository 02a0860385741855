import GRPCWire
import PeerSupport
import Testing

/// Metadata to HTTP/2 header fields and back: base64 for -bin, reserved names dropped both
/// ways, and received input that can never make it crash or fail validation.
@Suite("Metadata header fields")
struct MetadataHeaderFieldsTests {
  @Test("header fields are lowercase, in order, -bin values base64 without padding")
  func sending() {
    var metadata = Metadata()
    metadata.add("Authorization", "Bearer t")
    metadata.add("trace-bin", binary: [0xFB, 0xFF])
    metadata.add("x-trip", "t1")
    metadata.add("empty-bin", binary: [])
    let fields = metadata.headerFields()
    #expect(fields.map(\.name) == ["authorization", "trace-bin", "x-trip", "empty-bin"])
    #expect(fields.map(\.value) == ["Bearer t", "+/8", "t1", ""])
  }

  @Test(
    "reserved names are never sent",
    arguments: [
      ":path", ":authority", "grpc-timeout", "grpc-status", "grpc-message",
      "grpc-status-details-bin", "grpc-encoding", "grpc-accept-encoding", "grpc-anything",
      "content-type", "content-length", "te", "user-agent", "host", "connection", "keep-alive",
      "proxy-connection", "transfer-encoding", "upgrade",
    ])
  func reservedNotSent(_ name: String) {
    var metadata: Metadata = ["before": "1"]
    metadata.add(name, "v")
    metadata.add("after", "2")
    #expect(Metadata.isReserved(name))
    #expect(metadata.headerFields().map(\.name) == ["before", "after"])
  }

  @Test("every name in the reserved set is recognised as reserved")
  func reservedSet() {
    for name in Metadata.reservedHeaderNames {
      #expect(Metadata.isReserved(name), "\(name)")
    }
  }

  @Test(
    "ordinary names are not reserved",
    arguments: [
      "authorization", "x-grpc-thing", "grpc", "tea", "content-typex", "trace-bin", "", "c",
      "hostx",
      "keep", "prox", "upgrades",
    ])
  func notReserved(_ name: String) {
    #expect(!Metadata.isReserved(name))
  }

  // received field, the metadata values it yields under its name (empty: dropped)
  static let received: [(String, String, [Metadata.Value])] = [
    ("x-trip", "t1", [.string("t1")]),
    ("x-empty", "", [.string("")]),
    ("trace-bin", "AQID", [.binary([1, 2, 3])]),
    ("trace-bin", "AQI", [.binary([1, 2])]),
    ("trace-bin", "AQI=", [.binary([1, 2])]),
    ("trace-bin", "AQ==", [.binary([1])]),
    ("trace-bin", "AQ", [.binary([1])]),
    ("trace-bin", "", [.binary([])]),
    ("trace-bin", "AQI,AwQ=", [.binary([1, 2]), .binary([3, 4])]),
    ("trace-bin", "AQI, AwQ", [.binary([1, 2]), .binary([3, 4])]),
    ("trace-bin", "AQI,!!,AwQ", [.binary([1, 2]), .binary([3, 4])]),
    ("trace-bin", "not base64!", []),
    ("trace-bin", "A", []),
    ("x-text", "héllo", []),
    ("x-text", "tab\there", []),
    ("x-bad!name", "v", []),
    (":status", "200", []),
    ("grpc-status", "0", []),
    ("grpc-message", "ok", []),
    ("grpc-status-details-bin", "AQID", []),
    ("content-type", "application/grpc", []),
    ("user-agent", "grpc-python", []),
  ]

  @Test(
    "received fields become metadata; reserved and unusable ones are dropped", arguments: received)
  func receiving(_ name: String, _ value: String, _ expected: [Metadata.Value]) throws {
    let metadata = Metadata(receivedHeaders: [(name: name, value: value)])
    #expect(metadata[name] == expected)
    #expect(metadata.count == expected.count)
    try metadata.validate()
  }

  @Test("a trailers block keeps only the application's metadata, in order")
  func trailersBlock() {
    let fields: [(name: String, value: String)] = [
      (":status", "200"), ("content-type", "application/grpc"), ("x-b", "1"),
      ("grpc-status", "5"), ("grpc-message", "trip%20not%20found"), ("Trace-Bin", "AQI"),
      ("x-b", "2"), ("grpc-status-details-bin", "CAU"),
    ]
    let metadata = Metadata(receivedHeaders: fields)
    #expect(metadata == ["x-b": "1", "trace-bin": .binary([1, 2]), "x-b": "2"])
  }

  @Test("valid metadata survives a trip through header fields")
  func roundTrip() throws {
    let metadata: Metadata = [
      "authorization": "Bearer a.b.c", "x-trip": "providers/p/trips/t", "x-trip": "second",
      "trace-bin": .binary(Array(0...255)), "one-bin": .binary([7]), "empty": "",
    ]
    try metadata.validate()
    #expect(Metadata(receivedHeaders: metadata.headerFields()) == metadata)
  }

  @Test("thousands of random received fields never crash and always validate")
  func randomReceived() throws {
    var random = FuzzRandom(seed: 0xB1_4A7A)
    let nameAlphabet = Array("abcxyz-_.:!ABC0".utf8) + Array("grpc-".utf8)
    for _ in 0..<2_000 {
      var fields: [(name: String, value: String)] = []
      for _ in 0..<random.next(upTo: 6) {
        var name = (0..<random.next(upTo: 10)).map { _ in
          nameAlphabet[random.next(upTo: nameAlphabet.count)]
        }
        if random.next(upTo: 3) == 0 { name += Array("-bin".utf8) }
        let value = random.bytes(random.next(upTo: 20)).map { $0 % 2 == 0 ? $0 & 0x7F : $0 }
        fields.append(
          (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
      }
      let metadata = Metadata(receivedHeaders: fields)
      try metadata.validate()
      #expect(metadata.count <= fields.count * 20)
    }
  }
}
