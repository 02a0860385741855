/// A cursor over one message's wire bytes that reads them field by field, by protobuf-c 1.4's
/// rules: what protobuf-c's unpack refuses to frame, this throws `.malformed` for, and what it
/// frames, this reads to the same values.
///
/// The framing rules, from `protobuf_c_message_unpack`'s scan (protobuf-c.c):
/// - a tag is a varint of at most 5 bytes; its field number must be 1 to 2^29 - 1 (protobuf-c
///   would keep a field 0, or one past 2^29, as unknown; we refuse those, see
///   ``ProtoUnknownFields``);
/// - wire types 0 (varint), 1 (64-bit), 2 (length-delimited) and 5 (32-bit) only: groups (3,
///   4) and 6, 7 are refused, known field or not;
/// - a varint ends within 10 bytes and before the end of the message;
/// - a length prefix ends within 5 bytes (up to 35 bits, none dropped: a prefix of 2^32 is
///   refused, not read as 0), and its data ends before the end of the message;
/// - a 64-bit or 32-bit value has its 8 or 4 bytes.
///
/// Values are read as protobuf-c's `parse_uint64` reads them: the low 7 bits of each byte, the
/// 10th byte's bits past 64 dropped; a 32-bit field keeps the low 32 bits.
///
/// A value type on the stack of one decode; the bytes it reads must outlive it, and nothing it
/// returns (``lengthDelimited()``'s buffer) may outlive the bytes.
@_spi(GeneratedCode) public struct ProtoReader {
  @usableFromInline var position: UnsafePointer<UInt8>
  @usableFromInline let end: UnsafePointer<UInt8>

  /// A reader of `bytes`, which stay alive and unchanged while it reads.
  @inlinable @_spi(GeneratedCode) public init(_ bytes: UnsafeRawBufferPointer) {
    // An empty buffer may have no base address; one byte of static storage stands in.
    let start = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? Self.emptyBase
    position = start
    end = start + bytes.count
  }

  @usableFromInline static var emptyBase: UnsafePointer<UInt8> { UnsafePointer(emptyByte) }

  /// Where the next field's tag starts (``ProtoFieldSpan/add(_:field:)``).
  @inlinable @_spi(GeneratedCode) public var here: UnsafeRawPointer { UnsafeRawPointer(position) }

  /// Bytes left to read.
  @inlinable @_spi(GeneratedCode) public var remaining: Int { end - position }

  @inlinable @_spi(GeneratedCode) public var isAtEnd: Bool { position == end }

  @inlinable static func malformed() -> ProtoDecodingError {
    ProtoDecodingError(message: "", reason: .malformed, byteCount: 0)
  }

  /// The next field's number and wire type, nil at the end of the message.
  ///
  /// Always inlined, for its common case: a one-byte tag (fields 1 to 15); longer tags take
  /// ``nextLongTag()``. Called once per field of every message, it cost a call each (11 % of
  /// the client's CPU per GetTrip, issue 37).
  @inlinable @inline(__always) @_spi(GeneratedCode) public mutating func nextTag()
    throws(ProtoDecodingError) -> (number: UInt32, wireType: UInt8)?
  {
    guard position < end else { return nil }
    let first = position.pointee
    let wireType = first & 7
    let number: UInt32
    if first & 0x80 == 0 {
      number = UInt32(first >> 3)
      position += 1
    } else {
      // Two bytes (fields 16 to 2047: half of a Trip's) are common enough to inline too.
      guard end - position > 1, position[1] & 0x80 == 0 else { return try nextLongTag() }
      number = UInt32(first & 0x7f) >> 3 | UInt32(position[1]) << 4
      position += 2
    }
    // Field 0 and wire types 3, 4, 6 and 7 are refused, as below.
    guard number != 0, wireType <= 2 || wireType == 5 else { throw Self.malformed() }
    return (number, wireType)
  }

  /// ``nextTag()`` for a tag of more than two bytes.
  @usableFromInline mutating func nextLongTag() throws(ProtoDecodingError)
    -> (number: UInt32, wireType: UInt8)?
  {
    let first = position.pointee
    let wireType = first & 7
    var number = UInt32(first & 0x7f) >> 3
    if first & 0x80 == 0 {
      position += 1
    } else {
      // protobuf-c's parse_tag_and_wiretype: at most 5 bytes in all.
      let limit = min(5, remaining)
      var shift: UInt32 = 4
      var i = 1
      while true {
        guard i < limit else { throw Self.malformed() }
        let byte = position[i]
        number |= UInt32(byte & 0x7f) << shift
        i += 1
        if byte & 0x80 == 0 { break }
        shift += 7
      }
      position += i
    }
    guard ProtoUnknownFields.validNumbers.contains(number) else { throw Self.malformed() }
    switch wireType {
    case 0, 1, 2, 5: return (number, wireType)
    default: throw Self.malformed()
    }
  }

  /// A varint (wire type 0): at most 10 bytes, protobuf-c's `parse_uint64` of them. Always
  /// inlined for one byte (values up to 127: enums, counts, most lengths of time).
  @inlinable @inline(__always) @_spi(GeneratedCode) public mutating func varint()
    throws(ProtoDecodingError) -> UInt64
  {
    guard position < end, position.pointee & 0x80 == 0 else { return try longVarint() }
    defer { position += 1 }
    return UInt64(position.pointee)
  }

  /// ``varint()`` of more than one byte.
  @usableFromInline mutating func longVarint() throws(ProtoDecodingError) -> UInt64 {
    // Up to 8 bytes from one load, with 8 ahead: where the first byte without the high bit
    // is, and its 7-bit groups packed together in three steps, without a branch per byte (a
    // Timestamp's seconds and nanos take 5 each: 4 % of a Trip's decode, issue 37).
    if remaining >= 8 {
      let word = UInt64(littleEndian: UnsafeRawPointer(position).loadUnaligned(as: UInt64.self))
      let stops = ~word & 0x8080_8080_8080_8080
      if stops != 0 {
        let bits = stops.trailingZeroBitCount + 1
        var v = word & ((1 << bits) &- 1) & 0x7f7f_7f7f_7f7f_7f7f
        v = (v & 0x007f_007f_007f_007f) | (v & 0x7f00_7f00_7f00_7f00) >> 1
        v = (v & 0x0000_3fff_0000_3fff) | (v & 0x3fff_0000_3fff_0000) >> 2
        v = (v & 0x0000_0000_0fff_ffff) | (v & 0x0fff_ffff_0000_0000) >> 4
        position += bits / 8
        return v
      }
    }
    let limit = min(10, remaining)
    var value: UInt64 = 0
    var shift: UInt64 = 0
    var i = 0
    while i < limit {
      let byte = position[i]
      // Past 64 bits the shift drops the byte's bits, as C's `<<` on uint64_t would keep
      // only those that fit (the 10th byte's lowest bit).
      if shift < 64 { value |= UInt64(byte & 0x7f) << shift }
      i += 1
      if byte & 0x80 == 0 {
        position += i
        return value
      }
      shift += 7
    }
    throw Self.malformed()
  }

  /// A 64-bit value (wire type 1), little-endian.
  @inlinable @_spi(GeneratedCode) public mutating func fixed64() throws(ProtoDecodingError)
    -> UInt64
  {
    guard remaining >= 8 else { throw Self.malformed() }
    let value = UnsafeRawPointer(position).loadUnaligned(as: UInt64.self)
    position += 8
    return UInt64(littleEndian: value)
  }

  /// A 32-bit value (wire type 5), little-endian.
  @inlinable @_spi(GeneratedCode) public mutating func fixed32() throws(ProtoDecodingError)
    -> UInt32
  {
    guard remaining >= 4 else { throw Self.malformed() }
    let value = UnsafeRawPointer(position).loadUnaligned(as: UInt32.self)
    position += 4
    return UInt32(littleEndian: value)
  }

  /// The data of a length-delimited value (wire type 2), after its length prefix.
  @inlinable @_spi(GeneratedCode) public mutating func lengthDelimited()
    throws(ProtoDecodingError) -> UnsafeRawBufferPointer
  {
    let (prefix, count) = try lengthPrefix()
    let data = UnsafeRawBufferPointer(start: position + prefix, count: count)
    position += prefix + count
    return data
  }

  /// protobuf-c's scan_length_prefixed_data: the prefix's size and the data's, checked to fit.
  /// Always inlined for a one-byte prefix (data of up to 127 bytes).
  @inlinable @inline(__always) func lengthPrefix() throws(ProtoDecodingError)
    -> (prefix: Int, count: Int)
  {
    guard position < end else { throw Self.malformed() }
    let first = Int(position.pointee)
    guard first & 0x80 == 0 else { return try longLengthPrefix() }
    guard first <= remaining - 1 else { throw Self.malformed() }
    return (1, first)
  }

  @usableFromInline func longLengthPrefix() throws(ProtoDecodingError)
    -> (prefix: Int, count: Int)
  {
    let limit = min(5, remaining)
    var value = 0
    var shift = 0
    var i = 0
    while i < limit {
      let byte = position[i]
      // At most 35 bits: an Int holds them all.
      value |= Int(byte & 0x7f) << shift
      i += 1
      if byte & 0x80 == 0 {
        guard value <= remaining - i else { throw Self.malformed() }
        return (i, value)
      }
      shift += 7
    }
    throw Self.malformed()
  }

  /// The bytes of a field of wire type `wireType` that follow its tag, stepped over: what an
  /// unknown field keeps (for wire type 2, its length prefix and its data).
  @inlinable @_spi(GeneratedCode) public mutating func skip(wireType: UInt8)
    throws(ProtoDecodingError) -> UnsafeRawBufferPointer
  {
    let start = position
    switch wireType {
    case 0: _ = try varint()
    case 1: _ = try fixed64()
    case 5: _ = try fixed32()
    default: _ = try lengthDelimited()
    }
    return UnsafeRawBufferPointer(start: start, count: position - start)
  }

  /// Reads every field as unknown into `unknown`, as protobuf-c's unpack keeps the fields of a
  /// message it has no descriptor entry for.
  @_spi(GeneratedCode) public mutating func readUnknown(into unknown: inout ProtoUnknownFields)
    throws(ProtoDecodingError)
  {
    while let tag = try nextTag() {
      let bytes = try skip(wireType: tag.wireType)
      unknown.fields.append(
        ProtoUnknownFields.Field(
          number: tag.number, wireType: tag.wireType, bytes: Array(bytes)))
    }
  }
}

/// The byte an empty buffer's reader points at: never read, only compared.
nonisolated(unsafe) private let emptyByte = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
