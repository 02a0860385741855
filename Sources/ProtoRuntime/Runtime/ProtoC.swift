// Public: C types appear in the @inlinable bodies below.
public import CProtobufC

/// Reading protobuf-c's unpacked fields into Swift values. Every pointer is only read during
/// the call; what is kept is copied.
///
/// `@inlinable`: generated code in other modules calls these once per field; inlined and
/// specialised there, as they were when runtime and messages were one module.
@_spi(GeneratedCode) public enum ProtoC {
  /// protobuf-c leaves absent proto3 strings pointing at its shared empty string; NULL is
  /// treated the same way.
  @inlinable @_spi(GeneratedCode) public static func string(_ p: UnsafePointer<CChar>?) throws(ProtoDecodingError)
    -> String
  {
    guard let p, p.pointee != 0 else { return "" }
    guard let s = String(validatingCString: p) else {
      // The caller rethrows with the message name and size; see decodeThroughC.
      throw ProtoDecodingError(message: "", reason: .invalidUTF8, byteCount: 0)
    }
    return s
  }

  @inlinable @_spi(GeneratedCode) public static func bytes(_ b: ProtobufCBinaryData) -> [UInt8] {
    guard b.len > 0, let data = b.data else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: b.len))
  }

  @inlinable @_spi(GeneratedCode) public static func scalars<T>(_ p: UnsafeMutablePointer<T>?, _ n: Int) -> [T] {
    guard n > 0, let p else { return [] }
    return Array(UnsafeBufferPointer(start: p, count: n))
  }

  @inlinable @_spi(GeneratedCode) public static func map<T, R>(
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
  @inlinable @_spi(GeneratedCode) public static func message<M: CBridgedMessage>(
    _ p: UnsafeMutablePointer<M.CMessage>?, as: M.Type, _ strings: inout ProtoDecodeStrings
  ) throws(ProtoDecodingError) -> M {
    guard let p else { return M() }
    return try M(cMessage: p, strings: &strings)
  }

  @inlinable @_spi(GeneratedCode) public static func messages<M: CBridgedMessage>(
    _ p: UnsafeMutablePointer<UnsafeMutablePointer<M.CMessage>?>?, _ n: Int, as: M.Type,
    _ strings: inout ProtoDecodeStrings
  ) throws(ProtoDecodingError) -> [M] {
    try map(p, n) { (element) throws(ProtoDecodingError) -> M in
      guard let element else { return M() }
      return try M(cMessage: element, strings: &strings)
    }
  }

  /// ``messages(_:_:as:_:)`` for a list decoded after `earlier`, a list of its type in the
  /// same message: an element that `matches(cMessage:)` the one at its index in `earlier` is
  /// that one (its storage shared, not decoded again), and a list whose every element does,
  /// as long as `earlier`, is `earlier` itself (its array buffer shared too).
  @inlinable @_spi(GeneratedCode) public static func messages<M: CBridgedMessage>(
    _ p: UnsafeMutablePointer<UnsafeMutablePointer<M.CMessage>?>?, _ n: Int, as: M.Type,
    _ strings: inout ProtoDecodeStrings, sharing earlier: [M]
  ) throws(ProtoDecodingError) -> [M] {
    guard n > 0, let p else { return [] }
    func same(_ i: Int) -> Bool {
      guard i < earlier.count, let element = p[i] else { return false }
      return earlier[i].matches(cMessage: element)
    }
    var prefix = 0
    while prefix < n && same(prefix) { prefix += 1 }
    if prefix == n && n == earlier.count { return earlier }
    var out: [M] = []
    out.reserveCapacity(n)
    out.append(contentsOf: earlier[..<prefix])
    for i in prefix..<n {
      if same(i) {
        out.append(earlier[i])
      } else if let element = p[i] {
        out.append(try M(cMessage: element, strings: &strings))
      } else {
        out.append(M())
      }
    }
    return out
  }
}
