// Public: C types appear in the @inlinable bodies below.
public import CProtobufC

/// Reading protobuf-c's unpacked fields into Swift values. Every pointer is only read during
/// the call; what is kept is copied.
///
/// `@inlinable`: generated code in other modules calls these once per field; inlined and
/// specialised there, as they were when runtime and messages were one module.
@usableFromInline package enum ProtoC {
  /// protobuf-c leaves absent proto3 strings pointing at its shared empty string; NULL is
  /// treated the same way.
  @inlinable package static func string(_ p: UnsafePointer<CChar>?) throws(ProtoDecodingError)
    -> String
  {
    guard let p, p.pointee != 0 else { return "" }
    // Up to 15 UTF-8 bytes, a String is held inline and allocates nothing; a longer one is
    // built once per decode (ProtoDecodeSharing).
    var short = 1
    while short < 16 && p[short] != 0 { short += 1 }
    if short == 16 { return try ProtoDecodeSharing.string(p) }
    guard let s = String(validatingCString: p) else {
      // The caller rethrows with the message name and size; see decodeThroughC.
      throw ProtoDecodingError(message: "", reason: .invalidUTF8, byteCount: 0)
    }
    return s
  }

  @inlinable package static func bytes(_ b: ProtobufCBinaryData) -> [UInt8] {
    guard b.len > 0, let data = b.data else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: b.len))
  }

  @inlinable package static func scalars<T>(_ p: UnsafeMutablePointer<T>?, _ n: Int) -> [T] {
    guard n > 0, let p else { return [] }
    return Array(UnsafeBufferPointer(start: p, count: n))
  }

  @inlinable package static func map<T, R>(
    _ p: UnsafeMutablePointer<T>?, _ n: Int, _ transform: (T) throws(ProtoDecodingError) -> R
  ) throws(ProtoDecodingError) -> [R] {
    guard n > 0, let p else { return [] }
    var out: [R] = []
    out.reserveCapacity(n)
    for i in 0..<n { out.append(try transform(p[i])) }
    return out
  }

  /// A message member of a oneof: protobuf-c sets the pointer along with the case; a NULL one
  /// reads as the empty message, as an absent message field would.
  @inlinable package static func message<M: CBridgedMessage>(
    _ p: UnsafeMutablePointer<M.CMessage>?, as: M.Type
  ) throws(ProtoDecodingError) -> M {
    guard let p else { return M() }
    return try M(cMessage: p)
  }

  /// A repeated message field; an equal one decoded before in the same decode is shared
  /// (ProtoDecodeSharing), as a trip's `vehicle_waypoints` repeat its `remaining_waypoints`.
  @inlinable package static func messages<M: CBridgedMessage>(
    _ p: UnsafeMutablePointer<UnsafeMutablePointer<M.CMessage>?>?, _ n: Int, as: M.Type
  ) throws(ProtoDecodingError) -> [M] {
    guard n > 0, let p else { return [] }
    if let held = ProtoDecodeSharing.array(of: M.self, count: n, where: { sameMessages($0, p, n) }) {
      return held
    }
    let decoded = try map(p, n) { (element) throws(ProtoDecodingError) -> M in
      guard let element else { return M() }
      return try M(cMessage: element)
    }
    ProtoDecodeSharing.keep(array: decoded)
    return decoded
  }
}
