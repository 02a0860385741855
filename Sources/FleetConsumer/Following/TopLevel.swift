/// The top-level fields of a serialized message, read as plain bytes: where each field's
/// occurrence starts and ends, and a length-delimited one's contents. No value is decoded; the
/// generated messages' `init(serializedBytes:)` does that for the fields wanted.
enum TopLevel {
  /// One occurrence of a field.
  struct Field {
    let number: Int
    /// The wire type: 0 varint, 1 fixed 64-bit, 2 length-delimited, 5 fixed 32-bit.
    let wireType: UInt64
    /// The bytes after the key (and, for a length-delimited field, after its length).
    let payload: Range<Int>
    /// The whole occurrence: key, length and payload.
    let occurrence: Range<Int>
  }

  /// The fields of `bytes` in order. An element is nil where the bytes stop parsing here
  /// (``next(in:at:)`` gives nil), and is then the last: each caller decides what bytes it
  /// cannot read mean.
  static func fields(of bytes: UnsafeRawBufferPointer) -> Fields { Fields(bytes: bytes) }

  /// The sequence ``fields(of:)`` gives.
  struct Fields: Sequence, IteratorProtocol {
    fileprivate let bytes: UnsafeRawBufferPointer
    private var offset = 0

    fileprivate init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func next() -> Field?? {
      guard offset < bytes.count else { return nil }
      guard let field = TopLevel.next(in: bytes, at: &offset) else {
        offset = bytes.count
        return .some(nil)
      }
      return field
    }
  }

  /// The number of the field at `offset` in `bytes`, moving `offset` past it; nil where the
  /// bytes do not parse here (a group, a bad varint, a key or length prefix longer than the 5
  /// bytes protobuf-c reads, a field number 0 or above 0x1FFF_FFFF, a length past the end).
  /// protobuf-c keeps field numbers above 0x1FFF_FFFF as unknown fields: bytes this gives nil
  /// for may still decode, so a caller leaves such bytes to a whole decode.
  @inline(__always)
  static func field(in bytes: UnsafeRawBufferPointer, at offset: inout Int) -> Int? {
    next(in: bytes, at: &offset)?.number
  }

  /// The field at `offset` in `bytes`, moving `offset` past it; nil as ``field(in:at:)`` says.
  static func next(in bytes: UnsafeRawBufferPointer, at offset: inout Int) -> Field? {
    let first = offset
    guard let key = varint(bytes, &offset, maxBytes: 5), key >> 3 > 0, key >> 3 <= 0x1FFF_FFFF
    else { return nil }
    var start = offset
    switch key & 7 {
    case 0:
      guard varint(bytes, &offset, maxBytes: 10) != nil else { return nil }
    case 1:
      offset += 8
    case 2:
      guard let length = varint(bytes, &offset, maxBytes: 5),
        length <= UInt64(bytes.count - offset)
      else { return nil }
      start = offset
      offset += Int(length)
    case 5:
      offset += 4
    default:
      return nil
    }
    guard offset <= bytes.count else { return nil }
    return Field(
      number: Int(key >> 3), wireType: key & 7, payload: start..<offset, occurrence: first..<offset)
  }

  /// The varint at `offset`, of at most `maxBytes` bytes (10 for a value, 5 for a key or a
  /// length prefix, as protobuf-c reads them).
  private static func varint(
    _ bytes: UnsafeRawBufferPointer, _ offset: inout Int, maxBytes: Int
  ) -> UInt64? {
    var value: UInt64 = 0
    var shift: UInt64 = 0
    let end = min(bytes.count, offset + maxBytes)
    while offset < end {
      let byte = bytes[offset]
      offset += 1
      value |= UInt64(byte & 0x7F) << shift
      if byte & 0x80 == 0 { return value }
      shift += 7
    }
    return nil
  }
}
