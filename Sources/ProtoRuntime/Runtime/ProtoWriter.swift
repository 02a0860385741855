#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Writes a message's wire encoding straight into memory the caller sized with the message's
/// `encodedSize()`: the generated `write(to:)` of each message calls it once per field, with
/// the field's tag bytes spelled out by the generator.
///
/// The bytes are protobuf-c's `protobuf_c_message_pack` of the same value, byte for byte:
/// fields in number order, proto3 fields at their zero value left out, negative `int32` and
/// enum values as ten-byte varints, strings cut at their first NUL (protobuf-c measures them
/// with strlen), unknown fields last, as they arrived. A nested message's length is written
/// as protobuf-c writes it: one byte reserved, the message written, and the message moved
/// along when its length takes more than one byte.
///
/// `@_spi(GeneratedCode) public` and `@inlinable` throughout: generated code in other modules,
/// ours and users', calls it per field.
@frozen @_spi(GeneratedCode) public struct ProtoWriter {
  /// Where the next byte goes.
  @_spi(GeneratedCode) public var position: UnsafeMutablePointer<UInt8>

  @inlinable @_spi(GeneratedCode) public init(_ start: UnsafeMutablePointer<UInt8>) {
    position = start
  }

  /// One byte: a tag of a field numbered below 16, or a bool.
  @inlinable @_spi(GeneratedCode) public mutating func byte(_ value: UInt8) {
    position.pointee = value
    position += 1
  }

  /// A tag of two or more bytes, as the generator encoded it.
  @inlinable @_spi(GeneratedCode) public mutating func tag(_ value: UInt32) {
    varint(UInt64(value))
  }

  @inlinable @_spi(GeneratedCode) public mutating func varint(_ value: UInt64) {
    var v = value
    while v >= 0x80 {
      position.pointee = UInt8(truncatingIfNeeded: v) | 0x80
      position += 1
      v >>= 7
    }
    position.pointee = UInt8(truncatingIfNeeded: v)
    position += 1
  }

  /// int32 and enums: a negative value is sign-extended to ten bytes.
  @inlinable @_spi(GeneratedCode) public mutating func int32(_ value: Int32) {
    varint(UInt64(bitPattern: Int64(value)))
  }

  @inlinable @_spi(GeneratedCode) public mutating func sint32(_ value: Int32) {
    varint(UInt64(UInt32(bitPattern: (value << 1) ^ (value >> 31))))
  }

  @inlinable @_spi(GeneratedCode) public mutating func sint64(_ value: Int64) {
    varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
  }

  @inlinable @_spi(GeneratedCode) public mutating func fixed32(_ value: UInt32) {
    UnsafeMutableRawPointer(position).storeBytes(of: value.littleEndian, as: UInt32.self)
    position += 4
  }

  @inlinable @_spi(GeneratedCode) public mutating func fixed64(_ value: UInt64) {
    UnsafeMutableRawPointer(position).storeBytes(of: value.littleEndian, as: UInt64.self)
    position += 8
  }

  @inlinable @_spi(GeneratedCode) public mutating func bool(_ value: Bool) {
    byte(value ? 1 : 0)
  }

  /// A string field: its tag, length and UTF-8 up to the first NUL (see
  /// ``ProtoWire/stringLength(_:)``); nothing at all for a proto3 field (`omittingEmpty`)
  /// whose bytes up to the first NUL are none, as protobuf-c leaves such a field out.
  @inlinable @_spi(GeneratedCode) public mutating func string(_ value: String, tag: UInt32, omittingEmpty: Bool) {
    ProtoWire.withUTF8(value) { utf8 in
      let count = ProtoWire.cLength(utf8)
      if count == 0 && omittingEmpty { return }
      self.tag(tag)
      varint(UInt64(count))
      if count > 0 { position.initialize(from: utf8.baseAddress!, count: count) }
      position += count
    }
  }

  @inlinable @_spi(GeneratedCode) public mutating func bytes(_ value: [UInt8]) {
    varint(UInt64(value.count))
    value.withUnsafeBufferPointer { b in
      if let base = b.baseAddress, b.count > 0 { position.initialize(from: base, count: b.count) }
    }
    position += value.count
  }

  /// A nested message's length and encoding (the caller wrote its tag).
  @inlinable @_spi(GeneratedCode) public mutating func message<M: CBridgedMessage>(_ value: M) {
    let lengthAt = position
    position += 1
    value.write(to: &self)
    let length = position - lengthAt - 1
    if length < 0x80 {
      lengthAt.pointee = UInt8(truncatingIfNeeded: length)
      return
    }
    // Like protobuf-c's prefixed_message_pack: move the message along to make room.
    let lengthSize = ProtoWire.varintSize(UInt64(length))
    (lengthAt + lengthSize).update(from: lengthAt + 1, count: length)
    position = lengthAt
    varint(UInt64(length))
    position += length
  }

  /// The fields our schema does not know, as protobuf-c writes them: after every known one.
  @inlinable @_spi(GeneratedCode) public mutating func unknown(_ fields: ProtoUnknownFields) {
    for f in fields.fields {
      varint(UInt64(f.number) << 3 | UInt64(f.wireType))
      let count = f.bytes.count
      f.bytes.withUnsafeBufferPointer { b in
        if let base = b.baseAddress, count > 0 { position.initialize(from: base, count: count) }
      }
      position += count
    }
  }
}

/// Sizes of wire encodings, for the generated `encodedSize()`: each is exactly what
/// ``ProtoWriter`` writes for the same value.
@_spi(GeneratedCode) public enum ProtoWire {
  @inlinable @_spi(GeneratedCode) public static func varintSize(_ value: UInt64) -> Int {
    // 1 byte per 7 bits, at least one: (bits used + 6) / 7, from the leading zeros.
    let bits = 64 - (value | 1).leadingZeroBitCount
    return (bits + 6) / 7
  }

  @inlinable @_spi(GeneratedCode) public static func int32Size(_ value: Int32) -> Int {
    value < 0 ? 10 : varintSize(UInt64(value))
  }

  @inlinable @_spi(GeneratedCode) public static func sint32Size(_ value: Int32) -> Int {
    varintSize(UInt64(UInt32(bitPattern: (value << 1) ^ (value >> 31))))
  }

  @inlinable @_spi(GeneratedCode) public static func sint64Size(_ value: Int64) -> Int {
    varintSize(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
  }

  /// A length-delimited value of `count` bytes: its length prefix and the bytes.
  @inlinable @_spi(GeneratedCode) public static func delimitedSize(_ count: Int) -> Int {
    varintSize(UInt64(count)) + count
  }

  /// A string field's size: what ``ProtoWriter/string(_:tag:omittingEmpty:)`` writes.
  @inlinable @_spi(GeneratedCode) public static func stringSize(_ value: String, tagSize: Int, omittingEmpty: Bool)
    -> Int
  {
    let count = stringLength(value)
    return count == 0 && omittingEmpty ? 0 : tagSize + delimitedSize(count)
  }

  /// The bytes protobuf-c writes of `value`: its UTF-8 up to the first NUL, as protobuf-c
  /// measures its C strings with strlen (see ProtoArena.cString).
  @inlinable @_spi(GeneratedCode) public static func stringLength(_ value: String) -> Int {
    withUTF8(value) { cLength($0) }
  }

  @inlinable @_spi(GeneratedCode) public static func cLength(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
    guard let base = utf8.baseAddress, utf8.count > 0 else { return 0 }
    guard let nul = memchr(base, 0, utf8.count) else { return utf8.count }
    return UnsafeRawPointer(nul) - UnsafeRawPointer(base)
  }

  @inlinable @_spi(GeneratedCode) public static func withUTF8<R>(
    _ value: String, _ body: (UnsafeBufferPointer<UInt8>) -> R
  )
    -> R
  {
    if let r = value.utf8.withContiguousStorageIfAvailable(body) { return r }
    var contiguous = value
    return contiguous.withUTF8(body)
  }

  @inlinable @_spi(GeneratedCode) public static func messageSize<M: CBridgedMessage>(_ value: M) -> Int {
    delimitedSize(value.encodedSize())
  }

  @inlinable @_spi(GeneratedCode) public static func unknownSize(_ fields: ProtoUnknownFields) -> Int {
    var size = 0
    for f in fields.fields {
      size += varintSize(UInt64(f.number) << 3 | UInt64(f.wireType)) + f.bytes.count
    }
    return size
  }
}
