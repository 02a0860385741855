import ProtoDescriptors

/// The straight decode's shortcut for a message of fixed-width scalars alone (a
/// `google.type.LatLng`: two doubles): when its bytes are every field once, in number order,
/// each with its one-byte tag (what protobuf-c, Google's encoders and ours write when no value
/// is zero), the values are loaded from their places without the field loop. Any other bytes
/// (a field left out at zero, repeated, reordered, unknown) take the loop, which reads them as
/// protobuf-c does; on these bytes both read the same values. Such a message conforms to the
/// runtime's `ProtoFixedLayoutMessage`, and a repeated field of its type reads its run of
/// elements in that layout at once (`ProtoReader.appendRun(of:to:after:)`).
extension MessageWriter {
  /// The fields of the message `type` in their layout's order, with their tags and value
  /// sizes, or nil when one is not a singular fixed-width scalar without presence numbered 1
  /// to 15 (a one-byte tag), the message has a oneof or copy-on-write storage, or its file is
  /// not proto3 (where such a scalar could have presence, as in proto2 or editions). A function
  /// of the descriptors alone, so that the writer of a message holding a list of `type` finds
  /// the same answer as the writer of `type`, in whatever file and module it is.
  func fixedLayoutFields(_ type: String) -> [(number: Int32, tag: Int, size: Int)]? {
    guard let entry = model.messages[type], !cowMessages.contains(type) else { return nil }
    let message = entry.message
    // proto2's optional scalars have presence (a `has_` member), which the layout cannot say;
    // so do editions' by default (field_presence EXPLICIT). Only proto3's scalars have none.
    guard message.oneofDecl.isEmpty, !message.field.isEmpty,
      model.syntaxes[entry.file] == "proto3"
    else { return nil }
    var fields: [(number: Int32, tag: Int, size: Int)] = []
    for f in message.field.sorted(by: { ($0.number ?? 0) < ($1.number ?? 0) }) {
      guard f.label == .optional, f.oneofIndex == nil, f.proto3Optional != true,
        let number = f.number, (1...15).contains(number),
        let (wireType, size) = Self.fixedWidth(f.type)
      else { return nil }
      fields.append((number, Int(number) << 3 | wireType, size))
    }
    return fields
  }

  /// The size of the message `type`'s fixed layout, nil when it has none.
  func fixedLayoutSize(_ type: String) -> Int? {
    fixedLayoutFields(type).map { $0.reduce(0) { $0 + 1 + $1.size } }
  }

  /// The first lines of `init(wireBytes:strings:)` for `b`: the shortcut, or none.
  func fixedLayout(_ b: Bridge) -> [String] {
    guard fixedLayoutFields(b.full) != nil else { return [] }
    return [
      "// Every field once, in number order: loaded in place, without the field loop.",
      "if _bytes.count == Self.fixedLayoutSize, let _p = _bytes.baseAddress,",
      "  let _v = Self.fixedLayout(at: _p)",
      "{",
      "  self = _v",
      "  return",
      "}",
    ]
  }

  /// The conformance to `ProtoFixedLayoutMessage` of `b`, when it has a fixed layout.
  ///
  /// - Throws: ``GeneratorError`` naming the field of the layout that `b` has no Swift
  ///   property for (our bug): the init shortcut and a holder's run of `b` need the
  ///   conformance, so without it the generated code would not compile, far from the cause.
  mutating func fixedLayoutConformance(_ b: Bridge) throws(GeneratorError) {
    guard let fields = fixedLayoutFields(b.full) else { return }
    var offset = 0
    var checks: [String] = []
    var loads: [String] = []
    for f in fields {
      guard let field = b.plain.first(where: { $0.number == f.number }) else {
        let name = b.message.field.first { $0.number == f.number }?.name ?? "\(f.number)"
        throw GeneratorError(
          file: model.messages[b.full]?.file ?? "", element: "field \(b.full.dropFirst()).\(name)",
          reason: "it is in the message's fixed layout but has no Swift property (a generator bug)")
      }
      checks.append("_p.load(fromByteOffset: \(offset), as: UInt8.self) == \(f.tag)")
      let raw = f.size == 8 ? "UInt64" : "UInt32"
      let load =
        "\(raw)(littleEndian: _p.loadUnaligned(fromByteOffset: \(offset + 1), as: \(raw).self))"
      loads.append(
        "    _v.\(field.id) = \(fixedValue(field.proto.type ?? .unrecognized(0), load))")
      offset += 1 + f.size
    }
    line()
    line("extension \(model.swift[b.full]!): ProtoFixedLayoutMessage {")
    line("  @_spi(GeneratedCode) public static var fixedLayoutSize: Int { \(offset) }")
    line()
    line(
      "  @_spi(GeneratedCode) public static func fixedLayout(at _p: UnsafeRawPointer) -> Self? {")
    line("    guard")
    for (i, check) in checks.enumerated() {
      line("      \(check)\(i == checks.count - 1 ? "" : ",")")
    }
    line("    else { return nil }")
    line("    var _v = Self()")
    for text in loads { line(text) }
    line("    return _v")
    line("  }")
    line("}")
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
