@_spi(GeneratedCode) import ProtoDescriptors
@_spi(GeneratedCode) import ProtoRuntime
import Testing

/// A message type that holds its own type (`DescriptorProto.nested_type`) can be nested as deep
/// as its bytes allow: the straight decode refuses more than `ProtoDecodeStrings.depthLimit`
/// levels instead of recursing until the stack overflows (protobuf-c, which has no limit,
/// is not asked then: it would overflow its own).
@Suite("Nesting of a recursive message: decoded to the limit, refused past it")
struct DecodeDepthTests {
  /// `levels` DescriptorProtos, each the only nested type of the one around it, the innermost
  /// empty; built from the inside out.
  static func nested(_ levels: Int) -> [UInt8] {
    var reversed: [UInt8] = []
    for _ in 0..<levels {
      var count = reversed.count
      // The length prefix, least significant group first, written backwards.
      var prefix: [UInt8] = []
      repeat {
        prefix.append(UInt8(count & 0x7f) | (count > 0x7f ? 0x80 : 0))
        count >>= 7
      } while count > 0
      reversed += prefix.reversed()
      reversed.append(0x1a)  // field 3 (nested_type), wire type 2
    }
    return reversed.reversed()
  }

  /// Field `tag`'s wire bytes: the tag (one byte), a length prefix and `payload`.
  static func field(_ tag: UInt8, _ payload: [UInt8]) -> [UInt8] {
    var bytes = [tag]
    var count = payload.count
    repeat {
      bytes.append(UInt8(count & 0x7f) | (count > 0x7f ? 0x80 : 0))
      count >>= 7
    } while count > 0
    return bytes + payload
  }

  /// `name` (field 1) = "\xFF", not UTF-8: the straight decode throws at it, protobuf-c not.
  static let badName = field(0x0a, [0xff])
  /// `options` (field 7) sent twice: the straight decode leaves the merge to protobuf-c.
  static let optionsTwice = field(0x3a, []) + field(0x3a, [])

  static func depth(_ message: GoogleProtobuf.DescriptorProto) -> Int {
    var depth = 1
    var m = message
    while let inner = m.nestedType.first {
      depth += 1
      m = inner
    }
    return depth
  }

  @Test("as deep as the limit: decoded, the same value as protobuf-c's unpack gives")
  func atTheLimit() throws {
    let limit = ProtoDecodeStrings.depthLimit
    // The outermost message is level 1: `limit - 1` nested in it.
    let bytes = Self.nested(limit - 1)
    let ours = try GoogleProtobuf.DescriptorProto(serializedBytes: bytes)
    let theirs = try bytes.withUnsafeBytes { (raw) throws(ProtoDecodingError) in
      try GoogleProtobuf.DescriptorProto.decodeThroughC(raw)
    }
    #expect(Self.depth(ours) == limit)
    #expect(ours == theirs)
  }

  @Test("one level past the limit: refused as malformed, though protobuf-c decodes it")
  func pastTheLimit() throws {
    let bytes = Self.nested(ProtoDecodeStrings.depthLimit)
    let error = #expect(throws: ProtoDecodingError.self) {
      try GoogleProtobuf.DescriptorProto(serializedBytes: bytes)
    }
    #expect(error?.reason == .malformed)
    #expect(error?.message == "google.protobuf.DescriptorProto")
    #expect(error?.byteCount == bytes.count)
    // The documented difference: protobuf-c has no limit.
    let theirs = try bytes.withUnsafeBytes { (raw) throws(ProtoDecodingError) in
      try GoogleProtobuf.DescriptorProto.decodeThroughC(raw)
    }
    #expect(Self.depth(theirs) == ProtoDecodeStrings.depthLimit + 1)
  }

  @Test("100,000 levels in under 1 MB: refused, the stack intact")
  func hostileNesting() {
    let bytes = Self.nested(100_000)
    #expect(bytes.count < 1 << 20)
    let error = #expect(throws: ProtoDecodingError.self) {
      try GoogleProtobuf.DescriptorProto(serializedBytes: bytes)
    }
    #expect(error?.reason == .malformed)
  }

  /// Refused as malformed, without a crash: each input below starts with what makes the
  /// straight decode throw before it reaches a level past the limit, which used to hand the
  /// 100,000 levels to protobuf-c's unpack (it recursed until the stack overflowed).
  static func expectRefused<M: CBridgedMessage>(_: M.Type, _ bytes: [UInt8]) {
    let error = #expect(throws: ProtoDecodingError.self) { try M(serializedBytes: bytes) }
    #expect(error?.reason == .malformed)
    #expect(error?.message == M.protoMessageName)
    #expect(error?.byteCount == bytes.count)
  }

  @Test("a name not UTF-8, then 100,000 levels: refused, not handed to protobuf-c")
  func invalidNameFirst() {
    Self.expectRefused(GoogleProtobuf.DescriptorProto.self, Self.badName + Self.nested(100_000))
  }

  @Test("options sent twice, then 100,000 levels: refused, not handed to protobuf-c")
  func optionsTwiceFirst() {
    Self.expectRefused(
      GoogleProtobuf.DescriptorProto.self, Self.optionsTwice + Self.nested(100_000))
  }

  @Test("a file whose name is not UTF-8, its message type 100,000 levels deep: refused")
  func fileHoldingTheNesting() {
    Self.expectRefused(
      GoogleProtobuf.FileDescriptorProto.self,
      Self.badName + Self.field(0x22, Self.nested(100_000)))
  }

  @Test("options twice within the limit: protobuf-c's merge, no refusal")
  func shallowLeftToProtobufC() throws {
    let bytes = Self.optionsTwice + Self.nested(ProtoDecodeStrings.depthLimit - 1)
    let ours = try GoogleProtobuf.DescriptorProto(serializedBytes: bytes)
    let theirs = try bytes.withUnsafeBytes { (raw) throws(ProtoDecodingError) in
      try GoogleProtobuf.DescriptorProto.decodeThroughC(raw)
    }
    #expect(ours == theirs)
    #expect(Self.depth(ours) == ProtoDecodeStrings.depthLimit)
    #expect(ours.options != nil)
  }
}
