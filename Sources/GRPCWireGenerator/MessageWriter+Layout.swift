import ProtoDescriptors

/// The straight decode's shortcut for a message of fixed-width scalars alone (a
/// `google.type.LatLng`: two doubles): when its bytes are every field once, in number order,
/// each with its one-byte tag (what protobuf-c, Google's encoders and ours write when no value
/// is zero), the values are loaded from their places without the field loop. Any other bytes
/// (a field left out at zero, repeated, reordered, unknown) take the loop, which reads them as
/// protobuf-c does; on these bytes both read the same values.
extension MessageWriter {
  /// The lines of the shortcut for `b`, or none when a field is not a singular fixed-width
  /// scalar without presence numbered 1 to 15 (a one-byte tag), or the message has a oneof.
  func fixedLayout(_ b: Bridge) -> [String] {
    guard b.oneofs.isEmpty, !b.plain.isEmpty, !cowMessages.contains(b.full) else { return [] }
    var offset = 0
    var checks: [String] = []
    var loads: [String] = []
    for f in b.plain.sorted(by: { $0.number < $1.number }) {
      guard !f.repeated, !f.map, !f.required, f.presentIf == nil, f.kind == .plain,
        (1...15).contains(f.number), let (wireType, size) = Self.fixedWidth(f.proto.type)
      else { return [] }
      let tag = Int(f.number) << 3 | wireType
      checks.append("_p.load(fromByteOffset: \(offset), as: UInt8.self) == \(tag)")
      let raw = size == 8 ? "UInt64" : "UInt32"
      let load =
        "\(raw)(littleEndian: _p.loadUnaligned(fromByteOffset: \(offset + 1), as: \(raw).self))"
      loads.append("  \(f.id) = \(fixedValue(f.proto.type ?? .unrecognized(0), load))")
      offset += 1 + size
    }
    let head = [
      "// Every field once, in number order: loaded in place, without the field loop.",
      "if _bytes.count == \(offset), let _p = _bytes.baseAddress,",
    ]
    let conditions = checks.enumerated().map { "  \($1)\($0 == checks.count - 1 ? "" : ",")" }
    return head + conditions + ["{"] + loads + ["  return", "}"]
  }

  /// A fixed-width scalar type's wire type and size in bytes.
  private static func fixedWidth(_ type: FieldType?) -> (Int, Int)? {
    switch type {
    case .double?, .fixed64?, .sfixed64?: (1, 8)
    case .float?, .fixed32?, .sfixed32?: (5, 4)
    default: nil
    }
  }
}
