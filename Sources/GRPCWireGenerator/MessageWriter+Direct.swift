import ProtoDescriptors

/// The direct writer of a message (ProtoRuntime's `ProtoWriter`): `encodedSize()` and
/// `write(to:)`, which encode the Swift value straight into the caller's buffer, the bytes
/// protobuf-c's pack gives for the same value, without the C struct tree.
extension MessageWriter {
  typealias FieldType = GoogleProtobuf.FieldDescriptorProto.TypeEnum

  /// How protobuf-c writes one value of a type: its wire type, the Swift expressions for its
  /// size and the statement writing it (`$0` is the value), and the test that it is not zero
  /// (nil for a message, which has no zero).
  struct Wire {
    var wireType: Int32
    var size: (String) -> String
    var write: (String) -> String
    var nonZero: ((String) -> String)?
    /// The size does not depend on the value (fixed64, bool, …).
    var fixedSize: Bool
  }

  static func wire(_ type: FieldType) -> Wire? {
    func fixed(_ wire: Int32, _ size: String, _ write: @escaping (String) -> String) -> Wire {
      Wire(
        wireType: wire, size: { _ in size }, write: write, nonZero: { "\($0) != 0" },
        fixedSize: true)
    }
    func varint(_ size: @escaping (String) -> String, _ write: @escaping (String) -> String)
      -> Wire
    {
      Wire(wireType: 0, size: size, write: write, nonZero: { "\($0) != 0" }, fixedSize: false)
    }
    switch type {
    case .double: return fixed(1, "8") { "w.fixed64(\($0).bitPattern)" }
    case .float: return fixed(5, "4") { "w.fixed32(\($0).bitPattern)" }
    case .fixed64: return fixed(1, "8") { "w.fixed64(\($0))" }
    case .fixed32: return fixed(5, "4") { "w.fixed32(\($0))" }
    case .sfixed32: return fixed(5, "4") { "w.fixed32(UInt32(bitPattern: \($0)))" }
    case .sfixed64: return fixed(1, "8") { "w.fixed64(UInt64(bitPattern: \($0)))" }
    case .int64:
      return varint(
        { "ProtoWire.varintSize(UInt64(bitPattern: \($0)))" },
        { "w.varint(UInt64(bitPattern: \($0)))" })
    case .uint64: return varint({ "ProtoWire.varintSize(\($0))" }, { "w.varint(\($0))" })
    case .int32: return varint({ "ProtoWire.int32Size(\($0))" }, { "w.int32(\($0))" })
    case .uint32:
      return varint({ "ProtoWire.varintSize(UInt64(\($0)))" }, { "w.varint(UInt64(\($0)))" })
    case .sint32: return varint({ "ProtoWire.sint32Size(\($0))" }, { "w.sint32(\($0))" })
    case .sint64: return varint({ "ProtoWire.sint64Size(\($0))" }, { "w.sint64(\($0))" })
    case .bool:
      return Wire(
        wireType: 0, size: { _ in "1" }, write: { "w.bool(\($0))" }, nonZero: { $0 },
        fixedSize: true)
    case .enum:
      return Wire(
        wireType: 0, size: { "ProtoWire.int32Size(\($0).rawValue)" },
        write: { "w.int32(\($0).rawValue)" }, nonZero: { "\($0).rawValue != 0" }, fixedSize: false)
    case .bytes:
      return Wire(
        wireType: 2, size: { "ProtoWire.delimitedSize(\($0).count)" }, write: { "w.bytes(\($0))" },
        nonZero: { "!\($0).isEmpty" }, fixedSize: false)
    case .message:
      return Wire(
        wireType: 2, size: { "ProtoWire.messageSize(\($0))" }, write: { "w.message(\($0))" },
        nonZero: nil, fixedSize: false)
    case .string, .group, .unrecognized: return nil
    }
  }

  /// A field's tag and its size in bytes.
  static func tag(_ number: Int32, _ wireType: Int32) -> (value: UInt32, size: Int) {
    let tag = UInt32(number) << 3 | UInt32(wireType)
    var size = 1
    while tag >> (7 * UInt32(size)) != 0 { size += 1 }
    return (tag, size)
  }

  private static func writeTag(_ tag: (value: UInt32, size: Int)) -> String {
    if tag.size == 1 {
      let hex = String(tag.value, radix: 16)
      return "w.byte(0x\(hex.count < 2 ? "0" + hex : hex))"
    }
    return "w.tag(\(tag.value))"
  }

  /// `encodedSize()` and `write(to:)`: every field in number order (protobuf-c's order:
  /// protoc-c sorts its field descriptors by number), written as protobuf-c's pack writes it,
  /// then the unknown fields. A copy-on-write message's fields are read from its storage
  /// (`storage.name`), not through the accessors, which retain and release it per read; any
  /// other's through `self.`, as a field may be named like a local here (`size`).
  mutating func direct(_ b: Bridge) throws(GeneratorError) {
    let source = cowMessages.contains(b.full) ? "storage." : "self."
    var fields: [(field: MessageField, oneof: String?)] = b.plain.map { ($0, nil) }
    for oneof in b.oneofs {
      let name = b.message.oneofDecl[oneof.index].name ?? ""
      let property = SwiftNames.identifier(SwiftNames.camel(name, upperFirst: false))
      fields += oneof.members.map { ($0, source + property) }
    }
    fields.sort { $0.field.number < $1.field.number }
    let unknown = source + "unknownFields"
    for sizing in [true, false] {
      if sizing {
        line("  @_spi(GeneratedCode) public func encodedSize() -> Int {")
        line("    var size = 0")
      } else {
        line()
        line("  @_spi(GeneratedCode) public func write(to w: inout ProtoWriter) {")
      }
      for (field, oneof) in fields {
        try directField(sizing, field, source + field.id, oneof: oneof, "    ")
      }
      if sizing {
        line("    if !\(unknown).isEmpty { size += ProtoWire.unknownSize(\(unknown)) }")
        line("    return size")
      } else {
        line("    if !\(unknown).isEmpty { w.unknown(\(unknown)) }")
      }
      line("  }")
    }
  }

  /// Sizes (adding to `total`) or writes one value of `field` with its tag; `omitZero`: a
  /// proto3 field without presence, which protobuf-c leaves out at its zero value.
  private mutating func value(
    _ sizing: Bool, _ field: GoogleProtobuf.FieldDescriptorProto, number: Int32, _ v: String,
    _ indent: String, omitZero: Bool, total: String = "size"
  ) {
    let type = field.type ?? .unrecognized(0)
    guard let wire = Self.wire(type) else {
      // A string: its size needs its bytes up to a NUL, so the runtime tests it.
      let tag = Self.tag(number, 2)
      if sizing {
        line(
          "\(indent)\(total) += ProtoWire.stringSize(\(v), tagSize: \(tag.size), omittingEmpty: \(omitZero))"
        )
      } else {
        line("\(indent)w.string(\(v), tag: \(tag.value), omittingEmpty: \(omitZero))")
      }
      return
    }
    let tag = Self.tag(number, wire.wireType)
    let statement =
      sizing
      ? "\(total) += \(tag.size) + \(wire.size(v))" : "\(Self.writeTag(tag)); \(wire.write(v))"
    if omitZero, let nonZero = wire.nonZero {
      line("\(indent)if \(nonZero(v)) { \(statement) }")
    } else {
      line("\(indent)\(statement)")
    }
  }

  private mutating func directField(
    _ sizing: Bool, _ f: MessageField, _ name: String, oneof: String?, _ indent: String
  ) throws(GeneratorError) {
    let proto = f.proto
    let type = proto.type ?? .unrecognized(0)
    // A fixed-size value is sized without being read.
    let unread = sizing && Self.wire(type)?.fixedSize == true
    if let oneof {
      line("\(indent)if case .\(f.id)\(unread ? "" : "(let v)")? = \(oneof) {")
      value(sizing, proto, number: f.number, "v", indent + "  ", omitZero: false)
      line("\(indent)}")
    } else if f.map {
      try directMap(sizing, f, name, indent)
    } else if f.repeated {
      directRepeated(sizing, f, name, indent)
    } else if case .wrapper = f.kind {
      // The wrapper message, written in place: its one field, `value` (number 1), is a proto3
      // field, left out at zero.
      let inner = model.messages[proto.typeName ?? ""]!.message.field[0]
      let tag = Self.tag(f.number, 2)
      line("\(indent)if let v = \(name) {")
      line("\(indent)  var inner = 0")
      value(true, inner, number: 1, "v", indent + "  ", omitZero: true, total: "inner")
      if sizing {
        line("\(indent)  size += \(tag.size) + ProtoWire.delimitedSize(inner)")
      } else {
        line("\(indent)  \(Self.writeTag(tag))")
        line("\(indent)  w.varint(UInt64(inner))")
        value(false, inner, number: 1, "v", indent + "  ", omitZero: true)
      }
      line("\(indent)}")
    } else if f.required && f.kind == .message {
      throw GeneratorError(
        file: "", element: "field \(proto.name ?? "")",
        reason: "a required message field is not written by the direct writer yet")
    } else if f.presentIf != nil || f.kind == .message {
      line(unread ? "\(indent)if \(name) != nil {" : "\(indent)if let v = \(name) {")
      value(sizing, proto, number: f.number, "v", indent + "  ", omitZero: false)
      line("\(indent)}")
    } else {
      value(sizing, proto, number: f.number, name, indent, omitZero: f.proto3 && !f.required)
    }
  }

  private mutating func directRepeated(
    _ sizing: Bool, _ f: MessageField, _ name: String, _ indent: String
  ) {
    let type = f.proto.type ?? .unrecognized(0)
    if f.packed, let wire = Self.wire(type) {
      let tag = Self.tag(f.number, 2)
      line("\(indent)if !\(name).isEmpty {")
      let payload: String
      if wire.fixedSize {
        payload = "\(wire.size("v")) * \(name).count"
      } else {
        payload = "payload"
        line("\(indent)  var payload = 0")
        line("\(indent)  for v in \(name) { payload += \(wire.size("v")) }")
      }
      if sizing {
        line("\(indent)  size += \(tag.size) + ProtoWire.delimitedSize(\(payload))")
      } else {
        line("\(indent)  \(Self.writeTag(tag))")
        line("\(indent)  w.varint(UInt64(\(payload)))")
        line("\(indent)  for v in \(name) { \(wire.write("v")) }")
      }
      line("\(indent)}")
      return
    }
    if sizing, let wire = Self.wire(type), wire.fixedSize {
      let tag = Self.tag(f.number, wire.wireType)
      line("\(indent)size += (\(tag.size) + \(wire.size("v"))) * \(name).count")
      return
    }
    line("\(indent)for v in \(name) {")
    value(sizing, f.proto, number: f.number, "v", indent + "  ", omitZero: false)
    line("\(indent)}")
  }

  private mutating func directMap(
    _ sizing: Bool, _ f: MessageField, _ name: String, _ indent: String
  ) throws(GeneratorError) {
    let entry = model.messages[f.proto.typeName ?? ""]!
    // A proto3 entry's key and value are left out at zero; a proto2 entry's are present (the
    // bridge sets their `has_` members), so written whatever they hold.
    let omitZero = model.syntaxes[entry.file] == "proto3"
    let (key, value) = (entry.message.field[0], entry.message.field[1])
    let tag = Self.tag(f.number, 2)
    // In key order, as ProtoArena.mapEntries gives them to protobuf-c.
    line("\(indent)for (key, value) in \(name).sorted(by: { $0.key < $1.key }) {")
    line("\(indent)  var entry = 0")
    self.value(true, key, number: 1, "key", indent + "  ", omitZero: omitZero, total: "entry")
    self.value(true, value, number: 2, "value", indent + "  ", omitZero: omitZero, total: "entry")
    if sizing {
      line("\(indent)  size += \(tag.size) + ProtoWire.delimitedSize(entry)")
    } else {
      line("\(indent)  \(Self.writeTag(tag))")
      line("\(indent)  w.varint(UInt64(entry))")
      self.value(false, key, number: 1, "key", indent + "  ", omitZero: omitZero)
      self.value(false, value, number: 2, "value", indent + "  ", omitZero: omitZero)
    }
    line("\(indent)}")
  }
}
