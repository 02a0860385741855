// Public: C types appear in the @inlinable bodies below.
public import CProtobufC

/// Comparing protobuf-c's unpacked fields with Swift values without decoding them, for the
/// generated `matches(cMessage:)`: a caller that holds a value and receives it again (a
/// followed trip polled every second) keeps what it holds, and decodes only what changed.
///
/// Each function answers whether decoding the C field would give exactly the held value:
/// strings byte for byte (not Swift's `==`, which also equates canonically equivalent
/// spellings), floating-point numbers bit for bit. A C string that is not valid UTF-8, which
/// decoding refuses, matches no Swift string.
extension ProtoC {
  /// A string field: protobuf-c's shared empty string and NULL both read as "".
  @inlinable @_spi(GeneratedCode) public static func same(_ held: String, _ p: UnsafePointer<CChar>?) -> Bool {
    guard let p, p.pointee != 0 else { return held.isEmpty }
    var held = held
    return held.withUTF8 { utf8 in
      // Byte by byte, stopping at the C string's end: a held string with a NUL in it (which
      // no decoded C string has) fails at that byte instead of reading past `p`'s end.
      let c = UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self)
      for index in 0..<utf8.count where c[index] != utf8[index] || c[index] == 0 {
        return false
      }
      return c[utf8.count] == 0
    }
  }

  @inlinable @_spi(GeneratedCode) public static func same(_ held: [UInt8], _ b: ProtobufCBinaryData) -> Bool {
    same(held, b.data, b.len)
  }

  /// Bytes: `count` of them at `data` (none when `data` is NULL).
  @inlinable @_spi(GeneratedCode) public static func same(
    _ held: [UInt8], _ data: UnsafePointer<UInt8>?, _ count: Int
  ) -> Bool {
    guard count > 0, let data else { return held.isEmpty }
    return held.elementsEqual(UnsafeBufferPointer(start: data, count: count))
  }

  @inlinable @_spi(GeneratedCode) public static func same<T: Equatable>(_ held: T, _ c: T) -> Bool { held == c }

  /// Floating point: bit for bit, so that -0.0 and 0.0 differ and a NaN matches itself.
  @inlinable @_spi(GeneratedCode) public static func same(_ held: Double, _ c: Double) -> Bool {
    held.bitPattern == c.bitPattern
  }

  @inlinable @_spi(GeneratedCode) public static func same(_ held: Float, _ c: Float) -> Bool {
    held.bitPattern == c.bitPattern
  }

  /// A message field: absent on both sides, or present on both and matching.
  @inlinable @_spi(GeneratedCode) public static func same<M: CBridgedMessage>(
    _ held: M?, _ p: UnsafeMutablePointer<M.CMessage>?
  ) -> Bool {
    guard let p else { return held == nil }
    guard let held else { return false }
    return held.matches(cMessage: p)
  }

  /// A message member of a oneof, where a NULL pointer reads as the empty message.
  @inlinable @_spi(GeneratedCode) public static func sameMember<M: CBridgedMessage>(
    _ held: M, _ p: UnsafeMutablePointer<M.CMessage>?
  ) -> Bool {
    guard let p else { return held == M() }
    return held.matches(cMessage: p)
  }

  /// A repeated message field, where a NULL element reads as the empty message.
  @inlinable @_spi(GeneratedCode) public static func sameMessages<M: CBridgedMessage>(
    _ held: [M], _ p: UnsafeMutablePointer<UnsafeMutablePointer<M.CMessage>?>?, _ n: Int
  ) -> Bool {
    sameElements(held, p, n) { held, c in sameMember(held, c) }
  }

  /// A repeated field of any other kind; `same` compares one element.
  @inlinable @_spi(GeneratedCode) public static func sameElements<T, C>(
    _ held: [T], _ p: UnsafeMutablePointer<C>?, _ n: Int, _ same: (T, C) -> Bool
  ) -> Bool {
    guard n > 0, let p else { return held.isEmpty }
    guard held.count == n else { return false }
    for index in 0..<n where !same(held[index], p[index]) { return false }
    return true
  }
}

extension ProtoUnknownFields {
  /// Whether `cMessage`'s unknown fields decode to exactly these (see ``ProtoC``'s matching).
  /// `@inlinable` like ``init(cMessage:)``: the common case, none on either side, is a load
  /// and a branch.
  @inlinable @_spi(GeneratedCode) public func matches<C>(cMessage: UnsafePointer<C>) -> Bool {
    let base = UnsafeRawPointer(cMessage).assumingMemoryBound(to: ProtobufCMessage.self).pointee
    guard base.n_unknown_fields > 0, let unknown = base.unknown_fields else {
      return fields.isEmpty
    }
    return matches(UnsafeBufferPointer(start: unknown, count: Int(base.n_unknown_fields)))
  }

  @usableFromInline func matches(_ unknown: UnsafeBufferPointer<ProtobufCMessageUnknownField>)
    -> Bool
  {
    guard fields.count == unknown.count else { return false }
    for (held, c) in zip(fields, unknown) {
      guard held.number == c.tag,
        held.wireType == UInt8(truncatingIfNeeded: c.wire_type.rawValue),
        ProtoC.same(held.bytes, c.data, c.len)
      else { return false }
    }
    return true
  }
}
