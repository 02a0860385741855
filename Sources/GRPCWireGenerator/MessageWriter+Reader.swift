import ProtoDescriptors

/// The decode of a message straight from its wire bytes (`init(wireBytes:strings:)`): one pass
/// over its fields in the order they came, through the runtime's `ProtoReader`, each read as
/// protobuf-c's unpack reads it (ProtoReader+Fields.swift), with no C struct tree. Where
/// protobuf-c would merge (a non-repeated message field seen twice) or default (a missing
/// required field, a proto2 string with a default), it throws and `decodeFromWire` decodes
/// through protobuf-c instead. The values shared within one decode are the bridge's
/// (`sharingSources`), compared by their bytes instead of in a C tree.
extension MessageWriter {
  mutating func wireDecode(_ b: Bridge) throws(GeneratorError) {
    let cow = cowMessages.contains(b.full)
    let prefix = cow ? "storage." : ""
    if reachesRecursive(b.full) {
      line("  @_spi(GeneratedCode) public static var reachesRecursiveType: Bool { true }")
      line("")
    }
    line(
      "  @_spi(GeneratedCode) public init(wireBytes _bytes: UnsafeRawBufferPointer, "
        + "strings \(stringsName): inout ProtoDecodeStrings) throws(ProtoDecodingError) {")
    for text in fixedLayout(b) { line("    \(text)") }
    line("    self.init()")
    line("    try _readFields(wireBytes: _bytes, strings: &\(stringsName))")
    line("  }")
    line("")
    // A method on the value the init has made, not the init's own body: an init that reads
    // the fields into `self` copies it into its result (a retain and a release of every
    // field: 5 % of a Trip's decode, issue 37), a mutating method reads them in place.
    line(
      "  private mutating func _readFields(wireBytes _bytes: UnsafeRawBufferPointer, "
        + "strings \(stringsName): inout ProtoDecodeStrings) throws(ProtoDecodingError) {")
    if recursive(b.full) {
      // Hostile bytes could nest it until the stack overflows: refused past a depth.
      line("    try \(stringsName).enter()")
      line("    defer { \(stringsName).leave() }")
    }
    line("    var _r = ProtoReader(_bytes)")
    let unknown = "\(prefix)unknownFields"
    guard !b.plain.isEmpty || !b.oneofs.isEmpty else {
      line("    while let _tag = try _r.nextTag() { try _r.unknown(_tag, into: &\(unknown)) }")
      line("  }")
      return
    }
    var finishing: [String] = []
    for f in b.plain where f.required { line("    var _seen\(f.number) = false") }
    let plan = sharingPlan(b, prefix: prefix)
    for number in plan.spans.sorted() { line("    var _at\(number) = ProtoFieldSpan()") }
    // Notes where a field that others share with was met.
    func noted(_ f: MessageField) -> [String] {
      plan.spans.contains(f.number) ? ["_at\(f.number).add(_d, field: _at)"] : []
    }
    var cases: [(number: Int32, body: [String])] = []
    for (index, f) in b.plain.enumerated() {
      let prop = prefix + f.id
      var body: [String] = []
      if f.required { body.append("_seen\(f.number) = true") }
      let sources = plan.sources[index]
      if f.map {
        body += mapEntry(f, prop)
      } else if f.repeated {
        if let source = plan.lists[index] {
          // Read once the rest is: the list it shares may come after it on the wire.
          body.append("_at\(f.number).add(try _r.delimited(_tag.wireType), field: _at)")
          let within =
            source.numbers.count == 1
            ? "_at\(source.numbers[0]).bytes" : "_at\(source.numbers[0]).first"
          finishing += [
            "if let _s = _at\(f.number).bytes {",
            "  try ProtoListSharing.decode(&\(prop), _s, \(f.number), "
              + "earlier: \(source.value), in: \(within), \(source.numbers.last!)) {",
            "    (_d) throws(ProtoDecodingError) in "
              + "try \(f.swift)(wireBytes: _d, strings: &\(stringsName))",
            "  }",
            "}",
          ]
        } else {
          body += repeatedElement(f, prop, noting: noted(f))
        }
      } else if f.kind == .message && f.presentIf == nil {
        body.append("let _d = try _r.delimited(_tag.wireType)")
        body += noted(f)
        // protobuf-c merges a message field seen twice; its merge is left to it.
        body.append("if \(prop) != nil { throw ProtoReader.leftToProtobufC() }")
        var keyword = "if"
        for source in sources {
          let first = "_at\(source.numbers[0]).first"
          let bytes =
            source.numbers.count == 1
            ? first : "ProtoReader.first(\(source.numbers.last!), in: \(first))"
          // The bytes first: the value is copied only when it is shared.
          body.append("\(keyword) ProtoReader.same(_d, \(bytes)), let _s = \(source.value) {")
          body.append("  \(prop) = _s")
          keyword = "} else if"
        }
        let decode =
          if let type = f.proto.typeName, recalled(type) {
            "try \(stringsName).message(wire: _d, as: \(f.swift).self)"
          } else {
            "try \(f.swift)(wireBytes: _d, strings: &\(stringsName))"
          }
        if sources.isEmpty {
          body.append("\(prop) = \(decode)")
        } else {
          body.append("} else {")
          body.append("  \(prop) = \(decode)")
          body.append("}")
        }
      } else if f.kind == .message {
        // A one-field oneof standing for proto3 `optional`: the last one wins, as in a oneof.
        body.append(
          "\(prop) = try \(f.swift)(wireBytes: _r.delimited(_tag.wireType), "
            + "strings: &\(stringsName))")
      } else if case .wrapper = f.kind {
        let wrapper = model.swift[f.proto.typeName ?? ""] ?? ""
        body.append("let _d = try _r.delimited(_tag.wireType)")
        body.append("if \(prop) != nil { throw ProtoReader.leftToProtobufC() }")
        body.append("\(prop) = try \(wrapper)(wireBytes: _d, strings: &\(stringsName)).value")
      } else {
        body.append("\(prop) = \(wireValue(f.proto, swift: f.swift))")
        if f.presentIf != nil, f.kind == .string, f.cQuantifier == nil,
          f.proto.defaultValue != nil
        {
          // Absent, protobuf-c's pointer is the default string, not NULL.
          finishing.insert("if \(prop) == nil { throw ProtoReader.leftToProtobufC() }", at: 0)
        }
      }
      cases.append((f.number, body))
    }
    for oneof in b.oneofs {
      let name = b.message.oneofDecl[oneof.index].name ?? ""
      let prop = prefix + oneofProperty(name)
      for f in oneof.members {
        let value =
          f.kind == .message
          ? "try \(f.swift)(wireBytes: _r.delimited(_tag.wireType), strings: &\(stringsName))"
          : wireValue(f.proto, swift: f.swift)
        cases.append((f.number, ["\(prop) = .\(f.id)(\(value))"]))
      }
    }
    if plan.spans.isEmpty {
      line("    while let _tag = try _r.nextTag() {")
    } else {
      line("    while true {")
      line("      let _at = _r.here")
      line("      guard let _tag = try _r.nextTag() else { break }")
    }
    line("      switch _tag.number {")
    for (number, body) in cases.sorted(by: { $0.number < $1.number }) {
      line("      case \(number):")
      for text in body { line("        \(text)") }
    }
    line("      default:")
    line("        try _r.unknown(_tag, into: &\(unknown))")
    line("      }")
    line("    }")
    for f in b.plain where f.required {
      line("    guard _seen\(f.number) else { throw ProtoReader.leftToProtobufC() }")
    }
    for text in finishing { line("    \(text)") }
    line("  }")
  }

  /// Per field of `b.plain`, the earlier values it may share (none read after the pass), the
  /// list it is read after the pass to share with, if any, and the fields whose places the
  /// pass notes (``ProtoFieldSpan``) for these comparisons.
  private func sharingPlan(_ b: Bridge, prefix: String) -> (
    sources: [[SharingSource]], lists: [SharingSource?], spans: Set<Int32>
  ) {
    var sources: [[SharingSource]] = []
    var lists: [SharingSource?] = []
    var spans: Set<Int32> = []
    // The lists read once the rest is: in the pass they are still empty, so nothing read in
    // the pass looks for its value in them; after it, every list before one is complete.
    var deferred: Set<Int32> = []
    for (index, f) in b.plain.enumerated() {
      let all = sharingSources(f, b.plain[..<index], prefix: prefix)
      let list = f.repeated && f.kind == .message && !f.map ? all.first(where: \.list) : nil
      let used = list.map { [$0] } ?? all.filter { !deferred.contains($0.numbers[0]) }
      if list != nil { deferred.insert(f.number) }
      for source in used { spans.insert(source.numbers[0]) }
      sources.append(list == nil ? used : [])
      lists.append(list)
    }
    return (sources, lists, spans.union(deferred))
  }

  /// Whether a message of `type` can hold one of its own type, however deep down.
  private func recursive(_ type: String) -> Bool {
    var seen: Set<String> = []
    var next = [type]
    while let t = next.popLast() {
      for f in model.messages[t]?.message.field ?? [] where f.type == .message {
        guard let sub = f.typeName else { continue }
        if sub == type { return true }
        if seen.insert(sub).inserted { next.append(sub) }
      }
    }
    return false
  }

  /// Whether a message of `type` can hold one of a recursive type (itself or one below).
  private func reachesRecursive(_ type: String) -> Bool {
    var seen: Set<String> = [type]
    var next = [type]
    while let t = next.popLast() {
      if recursive(t) { return true }
      for f in model.messages[t]?.message.field ?? [] where f.type == .message {
        if let sub = f.typeName, seen.insert(sub).inserted { next.append(sub) }
      }
    }
    return false
  }

  /// Appending one element (or a packed run) of a repeated field that shares nothing.
  private func repeatedElement(_ f: MessageField, _ prop: String, noting: [String])
    -> [String]
  {
    let type = f.proto.type ?? .unrecognized(0)
    let reserve =
      "if \(prop).isEmpty { \(prop).reserveCapacity(1 + _r.run(of: \(f.number))) }"
    let element: [String]
    if f.kind == .message, noting.isEmpty, let size = fixedLayoutSize(f.proto.typeName ?? ""),
      size < 0x80, f.number < 2048
    {
      // The element, then those after it in the fixed layout, at once (a noted field's
      // occurrences are noted one by one).
      return [
        "let _v = try \(f.swift)(wireBytes: _r.delimited(_tag.wireType), "
          + "strings: &\(stringsName))",
        "_r.appendRun(of: \(f.number), to: &\(prop), after: _v)",
      ]
    } else if f.kind == .message {
      element =
        ["let _d = try _r.delimited(_tag.wireType)"] + noting + [
          reserve, "\(prop).append(try \(f.swift)(wireBytes: _d, strings: &\(stringsName)))",
        ]
    } else {
      // The value first: counted from its tag, the run ahead would be one short, and counted
      // from within the value (a length prefix read as a tag) about none, so the list would
      // grow by doubling.
      element = [
        "let _v = \(wireValue(f.proto, swift: f.swift))", reserve, "\(prop).append(_v)",
      ]
    }
    guard let packed = packedRun(type, swift: f.swift, prop) else { return element }
    // protobuf-c reads a length-delimited run of any packable field as packed, whatever the
    // .proto says, and any other wire type as one element.
    return ["if _tag.wireType == 2 {", "  \(packed)", "} else {"] + element.map { "  " + $0 }
      + ["}"]
  }

  private func packedRun(_ type: FieldType, swift: String, _ prop: String) -> String? {
    switch type {
    case .bool: return "try _r.appendPackedBools(to: &\(prop))"
    case .int32, .uint32, .int64, .uint64, .sint32, .sint64, .enum:
      return "try _r.appendPackedVarints(to: &\(prop)) { \(varintValue(type, swift, "$0")) }"
    case .fixed32, .sfixed32, .float:
      return "try _r.appendPacked32(to: &\(prop)) { \(fixedValue(type, "$0")) }"
    case .fixed64, .sfixed64, .double:
      return "try _r.appendPacked64(to: &\(prop)) { \(fixedValue(type, "$0")) }"
    case .string, .bytes, .message, .group, .unrecognized: return nil
    }
  }

  private func varintValue(_ type: FieldType, _ swift: String, _ v: String) -> String {
    switch type {
    case .int32: "Int32(truncatingIfNeeded: \(v))"
    case .uint32: "UInt32(truncatingIfNeeded: \(v))"
    case .int64: "Int64(bitPattern: \(v))"
    case .sint32: "ProtoReader.zigzag32(\(v))"
    case .sint64: "ProtoReader.zigzag64(\(v))"
    case .enum: "\(swift)(rawValue: Int32(truncatingIfNeeded: \(v)))"
    default: v
    }
  }

  func fixedValue(_ type: FieldType, _ v: String) -> String {
    switch type {
    case .float: "Float(bitPattern: \(v))"
    case .double: "Double(bitPattern: \(v))"
    case .sfixed32: "Int32(bitPattern: \(v))"
    case .sfixed64: "Int64(bitPattern: \(v))"
    default: v
    }
  }

  /// The Swift expression reading one scalar, string, bytes or enum value of `field` whose tag
  /// `_tag` (or `tag`) was just read from `reader`.
  private func wireValue(
    _ field: GoogleProtobuf.FieldDescriptorProto, swift: String, reader: String = "_r",
    tag: String = "_tag"
  ) -> String {
    let type = field.type ?? .unrecognized(0)
    let wt = "\(tag).wireType"
    switch type {
    case .bool: return "try \(reader).bool(\(wt))"
    case .string: return "try \(stringsName).string(\(reader).delimited(\(wt)))"
    case .bytes: return "ProtoReader.bytes(try \(reader).delimited(\(wt)))"
    case .fixed32, .sfixed32, .float: return fixedValue(type, "try \(reader).fixed32(\(wt))")
    case .fixed64, .sfixed64, .double: return fixedValue(type, "try \(reader).fixed64(\(wt))")
    default: return varintValue(type, swift, "try \(reader).varint(\(wt))")
    }
  }

  /// One entry of a map field, read as protobuf-c reads the entry message, into the map:
  /// a later entry with the same key replaces an earlier one, as the bridge's loop does.
  private func mapEntry(_ f: MessageField, _ prop: String) -> [String] {
    let entry = model.messages[f.proto.typeName ?? ""]!.message
    let (keyField, valueField) = (entry.field[0], entry.field[1])
    let (keySwift, valueSwift) = mapTypes(f)
    var body = [
      "var _e = ProtoReader(try _r.delimited(_tag.wireType))",
      "var _k: \(keySwift) = \(entryDefault(keyField, keySwift))",
    ]
    let valueIsMessage = valueField.type == .message
    body.append(
      valueIsMessage
        ? "var _v: \(valueSwift)? = nil"
        : "var _v: \(valueSwift) = \(entryDefault(valueField, valueSwift))")
    body.append("while let _t = try _e.nextTag() {")
    body.append("  switch _t.number {")
    body.append("  case 1: _k = \(wireValue(keyField, swift: keySwift, reader: "_e", tag: "_t"))")
    if valueIsMessage {
      body.append("  case 2:")
      body.append("    let _d = try _e.delimited(_t.wireType)")
      body.append("    if _v != nil { throw ProtoReader.leftToProtobufC() }")
      body.append("    _v = try \(valueSwift)(wireBytes: _d, strings: &\(stringsName))")
    } else {
      body.append(
        "  case 2: _v = \(wireValue(valueField, swift: valueSwift, reader: "_e", tag: "_t"))")
    }
    body.append("  default: _ = try _e.skip(wireType: _t.wireType)")
    body.append("  }")
    body.append("}")
    body.append("\(prop)[_k] = _v\(valueIsMessage ? " ?? \(valueSwift)()" : "")")
    return body
  }

  /// What a map entry's key or value is when the entry leaves it out: protobuf-c's zero.
  private func entryDefault(_ field: GoogleProtobuf.FieldDescriptorProto, _ swift: String)
    -> String
  {
    switch field.type {
    case .enum?: return "\(swift)(rawValue: 0)"
    default: return MessageField.scalar(field.type ?? .unrecognized(0))?.defaultValue ?? "0"
    }
  }
}
