import GRPCWire
import Testing

/// Metadata as a collection: keys, order, -bin keys, validation and what it prints.
@Suite("Metadata")
struct MetadataTests {
  @Test("keys are lowercased; values keep the order they were added in")
  func keysAndOrder() {
    var metadata = Metadata()
    metadata.add("X-Trip", "one")
    metadata.add("authorization", "Bearer t")
    metadata.add("x-trip", "two")
    metadata.add("X-Trace-Bin", binary: [1, 2])
    #expect(metadata.count == 4)
    #expect(!metadata.isEmpty)
    #expect(metadata["x-trip"] == [.string("one"), .string("two")])
    #expect(metadata["X-TRIP"] == [.string("one"), .string("two")])
    #expect(metadata.first("X-Trip") == "one")
    #expect(metadata.firstBinary("x-trace-bin") == [1, 2])
    #expect(metadata["absent"].isEmpty)
    #expect(metadata.first("absent") == nil)
    #expect(metadata.map(\.key) == ["x-trip", "authorization", "x-trip", "x-trace-bin"])

    metadata.removeAll("X-TRIP")
    #expect(metadata.map(\.key) == ["authorization", "x-trace-bin"])
  }

  @Test("a string added under a -bin key is stored as its UTF-8 bytes")
  func stringUnderBinaryKey() {
    var metadata = Metadata()
    metadata.add("trace-bin", "héllo")
    #expect(metadata["trace-bin"] == [.binary(Array("héllo".utf8))])
    #expect(metadata.first("trace-bin") == nil)
    #expect(metadata.firstBinary("trace-bin") == Array("héllo".utf8))
    #expect(metadata.headerFields().first?.value == "aMOpbGxv")
  }

  @Test("a dictionary literal builds the same metadata as add, duplicates included")
  func literal() {
    let literal: Metadata = ["A": "1", "b-bin": .binary([0xFF]), "a": "2", "c-bin": "x"]
    var added = Metadata()
    added.add("a", "1")
    added.add("b-bin", binary: [0xFF])
    added.add("a", "2")
    added.add("c-bin", binary: Array("x".utf8))
    #expect(literal == added)
    #expect(Metadata() == [:])
    #expect(Metadata().isEmpty)
  }

  @Test("equality depends on order")
  func orderedEquality() {
    let ab: Metadata = ["a": "1", "b": "2"]
    let ba: Metadata = ["b": "2", "a": "1"]
    #expect(ab != ba)
    var combined = Metadata()
    combined.add(contentsOf: ab)
    #expect(combined == ab)
  }

  @Test("description masks credentials and summarises binary values")
  func description() {
    let metadata: Metadata = [
      "authorization": "Bearer secret", "Cookie": "session=secret", "x-goog-api-key": "secret",
      "x-trip": "t1", "trace-bin": .binary([1, 2, 3]),
    ]
    let text = metadata.description
    #expect(!text.contains("secret"))
    #expect(text.contains("authorization: <masked>"))
    #expect(text.contains("x-trip: t1"))
    #expect(text.contains("trace-bin: <3 bytes>"))
  }

  @Test(
    "valid metadata passes validation",
    arguments: [
      ["authorization": "Bearer eyJhbGciOi.J9.x-_"],
      ["x.y_z-0": "", "a": " spaces  inside ", "trace-bin": .binary([0, 0xFF])],
      ["UPPER-Case": "~!@#$%^&*()"],
      [:],
    ] as [Metadata])
  func validMetadata(_ metadata: Metadata) throws {
    try metadata.validate()
  }

  // key, value, the error
  static let invalid: [(String, Metadata.Value, MetadataError.Reason)] = [
    ("", "x", .emptyKey),
    ("x y", "v", .invalidKeyCharacter(" ")),
    ("x/y", "v", .invalidKeyCharacter("/")),
    ("x-ü", "v", .invalidKeyCharacter("ü")),
    ("grpc-timeout", "1S", .reservedKey),
    ("grpc-custom", "v", .reservedKey),
    (":path", "/x", .reservedKey),
    ("content-type", "application/grpc", .reservedKey),
    ("te", "trailers", .reservedKey),
    ("user-agent", "me", .reservedKey),
    ("connection", "close", .reservedKey),
    ("host", "example.com", .reservedKey),
    ("x-id", .binary([1]), .binaryValueForASCIIKey),
    ("x", "a\nb", .invalidValueByte(0x0A, offset: 1)),
    ("x", "\r", .invalidValueByte(0x0D, offset: 0)),
    ("x", "ab\u{0}", .invalidValueByte(0x00, offset: 2)),
    ("x", "\u{7F}", .invalidValueByte(0x7F, offset: 0)),
    ("x", "\t", .invalidValueByte(0x09, offset: 0)),
    ("x", "né", .invalidValueByte(0xC3, offset: 1)),
  ]

  @Test("invalid keys and values are reported with the key and the reason", arguments: invalid)
  func invalidMetadata(_ key: String, _ value: Metadata.Value, _ reason: MetadataError.Reason) {
    var metadata: Metadata = ["ok": "fine"]
    metadata.add(key, value)
    #expect(throws: MetadataError(key: key.lowercased(), reason: reason)) {
      try metadata.validate()
    }
  }

  @Test("a validation error names the key but never shows the value")
  func errorHidesValue() throws {
    let metadata: Metadata = ["authorization": "Bearer top-secret\n"]
    let error = try #require(throws: MetadataError.self) { try metadata.validate() }
    #expect(error.description.contains("\"authorization\""))
    #expect(error.description.contains("0xA"))
    #expect(!error.description.contains("top-secret"))
  }
}
