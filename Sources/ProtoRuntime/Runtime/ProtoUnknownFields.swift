// Public: C types appear in the @inlinable bodies below.
public import CProtobufC

/// Fields a message carried that our schema does not know (a newer Fleet Engine, say), kept
/// byte for byte so that decoding and re-encoding a message loses nothing.
public struct ProtoUnknownFields: Hashable, Sendable {
  /// One unknown field as it was on the wire.
  public struct Field: Hashable, Sendable {
    /// The field number.
    public var number: UInt32
    /// The protobuf wire type (0 varint, 1 64-bit, 2 length-delimited, 5 32-bit).
    public var wireType: UInt8
    /// The bytes that followed the tag (for wire type 2, the length prefix and the data).
    public var bytes: [UInt8]

    public init(number: UInt32, wireType: UInt8, bytes: [UInt8]) {
      self.number = number
      self.wireType = wireType
      self.bytes = bytes
    }
  }

  /// In the order they arrived.
  public var fields: [Field]

  @inlinable public var isEmpty: Bool { fields.isEmpty }

  /// Inlinable: every message's decode starts with one (a call per message was 1.4 % of a
  /// frozen Trip's decode, issue 37). The empty list is set here, not as the property's
  /// default: other modules call a default's initialiser out of line (1.7 % of a Trip's
  /// decode, a call per message).
  @inlinable public init() { fields = [] }

  /// Field numbers a message may use (protobuf's encoding guide: 1 to 2^29 - 1).
  @usableFromInline static let validNumbers: ClosedRange<UInt32> = 1...((1 << 29) - 1)

  /// Throws `.malformed` for a field number outside ``validNumbers``.
  ///
  /// `@inlinable`, as generated code in other modules calls it for every message it decodes:
  /// the common case, no unknown fields, is then one load and a branch.
  @inlinable @_spi(GeneratedCode) public init<C>(cMessage: UnsafePointer<C>) throws(ProtoDecodingError) {
    // Every protobuf-c message struct starts with its ProtobufCMessage base.
    let base = UnsafeRawPointer(cMessage).assumingMemoryBound(to: ProtobufCMessage.self).pointee
    guard base.n_unknown_fields > 0, let unknown = base.unknown_fields else {
      self.init()
      return
    }
    try self.init(UnsafeBufferPointer(start: unknown, count: Int(base.n_unknown_fields)))
  }

  /// protobuf-c's unknown fields of one message, copied.
  @usableFromInline init(_ unknown: UnsafeBufferPointer<ProtobufCMessageUnknownField>)
    throws(ProtoDecodingError)
  {
    fields = []
    fields.reserveCapacity(unknown.count)
    for f in unknown {
      // protobuf-c rejects a tag whose first byte says field 0, but not a longer encoding of
      // it (0x80 0x00) nor one whose 5th byte overflows 32 bits. Kept, such a field would be
      // re-encoded into bytes that protobuf-c and Google's parsers refuse; the caller rethrows
      // with the message name and size (see decodeThroughC).
      guard Self.validNumbers.contains(f.tag) else {
        throw ProtoDecodingError(message: "", reason: .malformed, byteCount: 0)
      }
      let bytes = f.len > 0 ? Array(UnsafeBufferPointer(start: f.data, count: f.len)) : []
      let wireType = UInt8(truncatingIfNeeded: f.wire_type.rawValue)
      fields.append(Field(number: f.tag, wireType: wireType, bytes: bytes))
    }
  }

  /// Writes the fields into `cMessage`'s unknown fields; `@inlinable` like
  /// ``init(cMessage:)``, for the same reason.
  @inlinable @_spi(GeneratedCode) public func fill<C>(
    _ cMessage: UnsafeMutablePointer<C>, _ arena: ProtoArena
  ) {
    guard !fields.isEmpty else { return }
    fillUnknown(cMessage, arena)
  }

  @_spi(GeneratedCode) @usableFromInline func fillUnknown<C>(_ cMessage: UnsafeMutablePointer<C>, _ arena: ProtoArena) {
    let base = UnsafeMutableRawPointer(cMessage).assumingMemoryBound(to: ProtobufCMessage.self)
    base.pointee.n_unknown_fields = UInt32(fields.count)
    base.pointee.unknown_fields = arena.map(fields) { f in
      ProtobufCMessageUnknownField(
        tag: f.number, wire_type: ProtobufCWireType(rawValue: .init(f.wireType)),
        len: f.bytes.count,
        data: f.bytes.isEmpty ? nil : arena.copy(f.bytes))
    }
  }
}
