import ProtoDescriptors

/// protoc-c's descriptors are `extern const`, which Swift cannot take the address of; the
/// umbrella header of each C target has a function per message returning it, named this.
let accessorPrefix = "proto_descriptor__"

/// What `init(cMessage:strings:)` calls its ``ProtoDecodeStrings`` parameter: with an
/// underscore, which no field's Swift name has (SwiftNames.camel drops them), so no field
/// hides it.
let stringsName = "_strings"

/// The bridge of a message to protobuf-c's struct (`CBridgedMessage`): read it field by field
/// from the C message, compare with one in place (MessageWriter+Matching.swift), and fill one
/// from an arena.
extension MessageWriter {
  mutating func bridge(_ b: Bridge) throws(GeneratorError) {
    let swift = model.swift[b.full]!
    let cType = b.cType
    line("extension \(swift): CBridgedMessage {")
    line("  @_spi(GeneratedCode) public typealias CMessage = \(cType)")
    line()
    line(
      "  @_spi(GeneratedCode) public static var cDescriptor: UnsafePointer<ProtobufCMessageDescriptor> {"
    )
    line("    \(accessorPrefix)\(b.lower)()")
    line("  }")
    line()
    line(
      "  @_spi(GeneratedCode) public init(cMessage c: UnsafePointer<\(cType)>, strings \(stringsName): inout ProtoDecodeStrings) throws(ProtoDecodingError) {"
    )
    // A copy-on-write message's storage has no default: its other initialisers take one.
    if cowMessages.contains(b.full) { line("    self.init()") }
    if !b.message.field.isEmpty { line("    let m = c.pointee") }
    for (index, field) in b.plain.enumerated() {
      read(field, "    ", sharing: sharingSources(field, b.plain[..<index]))
    }
    for oneof in b.oneofs {
      let name = b.message.oneofDecl[oneof.index].name ?? ""
      line("    switch m.\(name.lowercased())_case.rawValue {")
      for f in oneof.members {
        line(
          "    case \(f.number): \(oneofProperty(name)) = .\(f.id)(\(readValue(f, "m." + f.cMember)))"
        )
      }
      line("    default: break")
      line("    }")
    }
    line("    unknownFields = try ProtoUnknownFields(cMessage: c)")
    line("  }")
    line()
    matches(b)
    line()
    line(
      "  @_spi(GeneratedCode) public func fill(_ c: UnsafeMutablePointer<\(cType)>, _ arena: ProtoArena) {"
    )
    for field in b.plain { write(field, "    ") }
    for oneof in b.oneofs {
      let name = b.message.oneofDecl[oneof.index].name ?? ""
      line("    switch \(oneofProperty(name)) {")
      for f in oneof.members {
        line("    case .\(f.id)(let v)?:")
        line("      c.pointee.\(name.lowercased())_case = .init(rawValue: \(f.number))")
        line("      c.pointee.\(f.cMember) = \(writeValue(f, "v"))")
      }
      line("    case nil: break")
      line("    }")
    }
    line("    unknownFields.fill(c, arena)")
    line("  }")
    line()
    try wireDecode(b)
    line()
    try direct(b)
    line("}")
    if cowMessages.contains(b.full) {
      line()
      line("extension \(swift): ProtoStorageMessage {")
      line("  @_spi(GeneratedCode) public var sharedStorage: AnyObject { storage }")
      line()
      line("  @_spi(GeneratedCode) public init(sharedStorage storage: AnyObject) {")
      line("    self.init(storage: unsafeDowncast(storage, to: Storage.self))")
      line("  }")
      line("}")
    }
    try fixedLayoutConformance(b)
  }

  /// Whether a singular field of message type `type` is decoded through
  /// ``ProtoDecodeStrings``' remembered messages: copy-on-write messages that hold a list, a
  /// string or bytes, which a trip repeats across its messages (a waypoint's location is the
  /// trip's pickup or drop-off point). One of scalars alone is not: its storage is the only
  /// allocation a match would save, and remembering it would push out the ones that hold more.
  func recalled(_ type: String) -> Bool {
    cowMessages.contains(type) && holdsHeapValues(type)
  }

  /// The Swift expression decoding the C message `p` of singular message field `f`.
  private func messageDecode(_ f: MessageField, _ p: String) -> String {
    if let type = f.proto.typeName, recalled(type) {
      return "try \(stringsName).message(\(p), as: \(f.swift).self)"
    }
    return "try \(f.swift)(cMessage: \(p), strings: &\(stringsName))"
  }

  func oneofProperty(_ name: String) -> String {
    SwiftNames.identifier(SwiftNames.camel(name, upperFirst: false))
  }

  private func readValue(_ f: MessageField, _ expr: String) -> String {
    switch f.kind {
    case .plain: expr
    case .bool: "\(expr) != 0"
    case .string: "try \(stringsName).string(\(expr))"
    case .bytes: "ProtoC.bytes(\(expr))"
    case .enumeration: "\(f.swift)(rawValue: Int32(truncatingIfNeeded: \(expr).rawValue))"
    case .message, .wrapper: "try ProtoC.message(\(expr), as: \(f.swift).self, &\(stringsName))"
    }
  }

  /// A value decoded earlier in the same message that a message field may turn out to equal:
  /// `value` is a Swift expression of the field's type (a list when `list`), or of its
  /// optional.
  struct SharingSource {
    var value: String
    var list: Bool
    /// Where its bytes are in the message's: the first field numbered `numbers[0]`, then,
    /// inside it, the field numbered `numbers[1]` (the last number names the field compared).
    var numbers: [Int32]
  }

  /// What `f` decodes to is first compared with these values, read in place
  /// (`matches(cMessage:)`), and shares their storage when equal: a value shared costs a
  /// retain, where decoding it again costs an allocation per storage, array and long string
  /// in it.
  ///
  /// - The fields before `f` in its message that hold its message type, when that type is
  ///   ``shared(_:)`` (a list's first element for a singular `f`): a Trip repeats its
  ///   waypoints (`vehicle_waypoints`, `current_route_segment_end_point`) and its stops.
  /// - The field of `f`'s type (and list-ness) in the first element of an earlier list of a
  ///   ``shared(_:)`` message, when that type holds a list or a string: a Trip's `route` and
  ///   `current_route_segment_traffic` are its first remaining waypoint's `path_to_waypoint`
  ///   and `traffic_to_waypoint` (both lead to that waypoint). Types of scalars alone
  ///   (`Timestamp`) are not compared: decoding them allocates nothing.
  func sharingSources(
    _ f: MessageField, _ earlier: ArraySlice<MessageField>, prefix: String = ""
  ) -> [SharingSource] {
    guard f.kind == .message, !f.map, f.presentIf == nil, let type = f.proto.typeName else {
      return []
    }
    var sources: [SharingSource] = []
    if shared(type) {
      for e in earlier
      where e.kind == .message && !e.map && e.presentIf == nil && e.proto.typeName == type {
        let value = prefix + e.id
        if f.repeated {
          if e.repeated {
            sources.append(SharingSource(value: value, list: true, numbers: [e.number]))
          }
        } else {
          sources.append(
            SharingSource(
              value: e.repeated ? "\(value).first" : value, list: false, numbers: [e.number]))
        }
      }
    }
    guard f.repeated || holdsHeapValues(type) else { return sources }
    for e in earlier where e.kind == .message && e.repeated && !e.map {
      guard let elementType = e.proto.typeName, shared(elementType),
        let element = model.messages[elementType]?.message
      else { continue }
      for g in element.field
      where g.typeName == type && (g.label == .repeated) == f.repeated && g.oneofIndex == nil {
        let name = SwiftNames.identifier(SwiftNames.camel(g.name ?? "", upperFirst: false))
        let list = prefix + e.id
        // The element's field read in place: `first?.` copies the whole element (a retain
        // per field of a waypoint) before taking the field.
        let value = "(\(list).isEmpty ? \(f.repeated ? "[]" : "nil") : \(list)[0].\(name))"
        sources.append(
          SharingSource(value: value, list: f.repeated, numbers: [e.number, g.number ?? 0]))
      }
    }
    return sources
  }

  /// Whether a decode compares a message of `type` with those of its type decoded before it in
  /// the same message (``sharingSources(_:_:)``): a copy-on-write message (a value shared
  /// saves its storage), or one in a copy-on-write message's tree that holds a list, a string
  /// or bytes (a value shared saves those). Messages of other modules' trees are not compared:
  /// their generated code stays as it was.
  private func shared(_ type: String) -> Bool {
    cowMessages.contains(type) || (cowTrees.contains(type) && holdsHeapValues(type))
  }

  /// Whether a message of `type` holds a list, a string or bytes of its own: what decoding
  /// it allocates for.
  private func holdsHeapValues(_ type: String) -> Bool {
    guard let message = model.messages[type]?.message else { return false }
    return message.field.contains {
      $0.label == .repeated || $0.type == .string || $0.type == .bytes
    }
  }

  private mutating func read(_ f: MessageField, _ indent: String, sharing: [SharingSource] = []) {
    let c = "m.\(f.cMember)"
    if let presentIf = f.presentIf {
      line("\(indent)if \(presentIf) { \(f.id) = \(readValue(f, c)) }")
    } else if f.map {
      let entry = model.messages[f.proto.typeName ?? ""]!.message
      line(
        "\(indent)for entry in UnsafeBufferPointer(start: \(c), count: m.\(f.cQuantifier ?? "")) {")
      line("\(indent)  let e = entry!.pointee")
      line(
        "\(indent)  \(f.id)[\(entryRead(entry.field[0], "e.key"))] = \(entryRead(entry.field[1], "e.value"))"
      )
      line("\(indent)}")
    } else if f.repeated {
      let n = "m.\(f.cQuantifier ?? "")"
      if f.kind == .message {
        // Element by element with the first earlier list of the type, if there is one.
        let shared = sharing.first(where: \.list).map { ", sharing: \($0.value)" } ?? ""
        line(
          "\(indent)\(f.id) = try ProtoC.messages(\(c), \(n), as: \(f.swift).self, &\(stringsName)\(shared))"
        )
      } else if f.kind == .plain {
        line("\(indent)\(f.id) = ProtoC.scalars(\(c), \(n))")
      } else {
        line(
          "\(indent)\(f.id) = try ProtoC.map(\(c), \(n)) { v throws(ProtoDecodingError) in \(readValue(f, "v")) }"
        )
      }
    } else if f.kind == .message && !sharing.isEmpty {
      // Each earlier value of the type (a list's first element), then a decode.
      line("\(indent)if let p = \(c) {")
      var keyword = "if"
      for earlier in sharing {
        // `_shared`: no field's Swift name has an underscore (see stringsName).
        line("\(indent)  \(keyword) let _shared = \(earlier.value), _shared.matches(cMessage: p) {")
        line("\(indent)    \(f.id) = _shared")
        keyword = "} else if"
      }
      line("\(indent)  } else {")
      line("\(indent)    \(f.id) = \(messageDecode(f, "p"))")
      line("\(indent)  }")
      line("\(indent)}")
    } else if f.kind == .message {
      line("\(indent)if let p = \(c) { \(f.id) = \(messageDecode(f, "p")) }")
    } else if case .wrapper(let kind) = f.kind {
      let value =
        switch kind {
        case "bool": "p.pointee.value != 0"
        case "string": "try \(stringsName).string(p.pointee.value)"
        case "bytes": "ProtoC.bytes(p.pointee.value)"
        default: "p.pointee.value"
        }
      line("\(indent)if let p = \(c) { \(f.id) = \(value) }")
    } else {
      line("\(indent)\(f.id) = \(readValue(f, c))")
    }
  }

  private func entryRead(_ field: GoogleProtobuf.FieldDescriptorProto, _ expr: String) -> String {
    let swift = model.swift[field.typeName ?? ""] ?? ""
    switch field.type {
    case .message?:
      return
        "try \(expr).map { p throws(ProtoDecodingError) in try \(swift)(cMessage: p, strings: &\(stringsName)) } ?? \(swift)()"
    case .enum?:
      return "\(swift)(rawValue: Int32(truncatingIfNeeded: \(expr).rawValue))"
    default:
      switch MessageField.scalar(field.type ?? .unrecognized(0))?.kind {
      case .bool?: return "\(expr) != 0"
      case .string?: return "try \(stringsName).string(\(expr))"
      case .bytes?: return "ProtoC.bytes(\(expr))"
      default: return expr
      }
    }
  }

  private func writeValue(_ f: MessageField, _ v: String) -> String {
    switch f.kind {
    case .plain: v
    case .bool: "\(v) ? 1 : 0"
    case .string: "arena.cString(\(v))"
    case .bytes: "arena.binary(\(v))"
    case .enumeration: ".init(rawValue: .init(truncatingIfNeeded: \(v).rawValue))"
    case .message, .wrapper: "arena.message(\(v))"
    }
  }

  private mutating func write(_ f: MessageField, _ indent: String) {
    let c = "c.pointee.\(f.cMember)"
    if f.presentIf != nil {
      line("\(indent)if let v = \(f.id) {")
      if let markPresent = f.markPresent { line("\(indent)  \(markPresent)") }
      line("\(indent)  \(c) = \(writeValue(f, "v"))")
      line("\(indent)}")
    } else if f.map {
      let entryFull = f.proto.typeName ?? ""
      let entryC = cNames.messages[String(entryFull.dropFirst())]!
      entryAccessors.append(entryC.lower)
      let entry = model.messages[entryFull]!.message
      line("\(indent)if !\(f.id).isEmpty {")
      line("\(indent)  c.pointee.\(f.cQuantifier ?? "") = \(f.id).count")
      line("\(indent)  \(c) = arena.mapEntries(")
      line(
        "\(indent)    \(f.id), descriptor: \(accessorPrefix)\(entryC.lower)(), as: \(entryC.cType).self"
      )
      line("\(indent)  ) { key, value, e in")
      for (entryField, name) in [(entry.field[0], "key"), (entry.field[1], "value")] {
        // A proto2 map entry's scalars have `has_` members, which protobuf-c's encoder reads.
        if let has = cNames.fields[entryC.cType]?[entryField.number ?? 0]?.quantifier {
          line("\(indent)    e.pointee.\(has) = 1")
        }
        line("\(indent)    e.pointee.\(name) = \(entryWrite(entryField, name))")
      }
      line("\(indent)  }")
      line("\(indent)}")
    } else if f.repeated {
      line("\(indent)if !\(f.id).isEmpty {")
      line("\(indent)  c.pointee.\(f.cQuantifier ?? "") = \(f.id).count")
      if f.kind == .message {
        line("\(indent)  \(c) = arena.messages(\(f.id))")
      } else if f.kind == .plain {
        line("\(indent)  \(c) = arena.copy(\(f.id))")
      } else {
        line("\(indent)  \(c) = arena.map(\(f.id)) { v in \(writeValue(f, "v")) }")
      }
      line("\(indent)}")
    } else if f.kind == .message {
      line("\(indent)if let v = \(f.id) { \(c) = arena.message(v) }")
    } else if case .wrapper = f.kind {
      let wrapper = model.swift[f.proto.typeName ?? ""] ?? ""
      line("\(indent)if let v = \(f.id) {")
      line("\(indent)  var wrapper = \(wrapper)()")
      line("\(indent)  wrapper.value = v")
      line("\(indent)  \(c) = arena.message(wrapper)")
      line("\(indent)}")
    } else if f.kind == .string || f.kind == .bytes {
      line("\(indent)if !\(f.id).isEmpty { \(c) = \(writeValue(f, f.id)) }")
    } else {
      line("\(indent)\(c) = \(writeValue(f, f.id))")
    }
  }

  private func entryWrite(_ field: GoogleProtobuf.FieldDescriptorProto, _ v: String) -> String {
    switch field.type {
    case .message?: return "arena.message(\(v))"
    case .enum?: return ".init(rawValue: .init(truncatingIfNeeded: \(v).rawValue))"
    default:
      switch MessageField.scalar(field.type ?? .unrecognized(0))?.kind {
      case .bool?: return "\(v) ? 1 : 0"
      case .string?: return "arena.cString(\(v))"
      case .bytes?: return "arena.binary(\(v))"
      default: return v
      }
    }
  }
}
