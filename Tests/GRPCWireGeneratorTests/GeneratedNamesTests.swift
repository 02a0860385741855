import GeneratorFixtures
import Testing

/// GeneratorFixtures is Tests/Protos/acme/names/v1/names.proto as CodeGen/generate writes it:
/// that this suite compiles is half the test; the other half is that every field survives a
/// round trip through protobuf-c.
@Suite("Generated messages with names Swift reserves")
struct GeneratedNamesTests {
  typealias Keywords = AcmeNamesV1.Keywords

  static func filled() -> Keywords {
    var message = Keywords()
    message.`class` = 7
    message.`protocol` = "h2"
    message.`init` = [1, -2, 3]
    message.`default` = false
    message.type = 0
    message.`in` = ["a": 1, "b": 2]
    var kind = Keywords.TypeMessage()
    kind.`is` = 5
    message.kind = kind
    message.selfValue = .`true`
    var at = GoogleProtobuf.Timestamp()
    at.seconds = 1_700_000_000
    message.at = at
    message.`where` = .`return`("home")
    return message
  }

  @Test("keyword-named fields, nested Type and Self, a oneof `where` round-trip")
  func roundTrip() throws {
    let message = Self.filled()
    let decoded = try Keywords(serializedBytes: message.serializedBytes())
    #expect(decoded == message)
    #expect(decoded.`in` == ["a": 1, "b": 2])
    #expect(decoded.`where` == .`return`("home"))
    #expect(decoded.kind?.`is` == 5)
  }

  @Test("proto2 presence: a field set to its zero value is present, an unset one absent")
  func presence() throws {
    var message = Keywords()
    message.type = 0
    let decoded = try Keywords(serializedBytes: message.serializedBytes())
    #expect(decoded.type == 0)
    #expect(decoded.`class` == nil)
    #expect(decoded.`default` == nil)
  }

  @Test("an extension field (100) is kept as an unknown field and sent again")
  func extensionKept() throws {
    // Field 100, varint: tag (100 << 3 | 0) = 800 = 0xA0 0x06, value 42.
    let bytes: [UInt8] = [0xA0, 0x06, 42]
    let decoded = try Keywords(serializedBytes: bytes)
    #expect(decoded.unknownFields.fields.map(\.number) == [100])
    #expect(decoded.serializedBytes() == bytes)
  }

  @Test("the direct writer's bytes are protobuf-c's pack, a proto2 map with zero values too")
  func directWriterIsProtobufCPack() {
    var message = Self.filled()
    message.`in` = ["": 0, "a": 1]  // proto2 entries: an empty key and a zero value are sent
    message.unknownFields.fields = [.init(number: 100, wireType: 0, bytes: [42])]
    var packed: [UInt8] = []
    message.encodeThroughC(appendingTo: &packed)
    #expect(message.serializedBytes() == packed)
  }
}
