import ProtoDescriptors

/// Writes the Swift message layer of one .proto file: a struct per message and an enum per
/// enum, then each message's bridge to protobuf-c's struct (`MessageWriter+Bridge.swift`).
struct MessageWriter {
  /// A message whose bridge is still to be written, in the order `message` finished them.
  struct Bridge {
    var full: String
    var lower: String
    var cType: String
    var plain: [MessageField]
    var oneofs: [(index: Int, members: [MessageField])]
    var message: GoogleProtobuf.DescriptorProto
  }

  let model: MessageModel
  let cNames: ProtocCNames
  /// Messages kept in copy-on-write storage (full names with the leading dot).
  let cowMessages: Set<String>
  /// The message types in the trees of ``cowMessages``, those included: where a decode looks
  /// for values it has decoded already (see `sharingSources` in MessageWriter+Bridge.swift).
  let cowTrees: Set<String>
  var out = TextLines()
  var bridges: [Bridge] = []
  /// Descriptor symbols (without `__descriptor`) of the map entries the bridges write.
  var entryAccessors: [String] = []

  init(model: MessageModel, cNames: ProtocCNames, cowMessages: Set<String>) {
    self.model = model
    self.cNames = cNames
    self.cowMessages = cowMessages
    var trees: Set<String> = []
    var next = Array(cowMessages)
    while let type = next.popLast() {
      guard trees.insert(type).inserted, let message = model.messages[type]?.message else {
        continue
      }
      next += message.field.compactMap { $0.type == .message ? $0.typeName : nil }
    }
    cowTrees = trees
  }

  mutating func line(_ text: String = "") { out.line(text) }

  mutating func lines(_ texts: [String]) { out.lines(texts, indent: "") }

  // MARK: Enums

  mutating func enumeration(_ full: String, indent: String) {
    let entry = model.enums[full]!
    let enumType = entry.enumType
    let swiftName = String(model.swift[full]!.split(separator: ".").last!)
    // An alias (allow_alias): the first name stands for the number.
    var seen: Set<Int32> = []
    var cases: [(name: String, number: Int32, protoName: String, index: Int)] = []
    for (index, value) in enumType.value.enumerated() {
      let number = value.number ?? 0
      if !seen.insert(number).inserted { continue }
      let name = SwiftNames.identifier(
        SwiftNames.enumCaseName(enum: enumType.name ?? "", value: value.name ?? ""))
      cases.append((name, number, value.name ?? "", index))
    }
    lines(model.doc(entry.file, entry.path, indent: indent))
    let i2 = indent + "  "
    line(
      "\(indent)public enum \(SwiftNames.identifier(swiftName)): RawRepresentable, CaseIterable, Hashable, Sendable,"
    )
    line("\(indent)  CustomStringConvertible")
    line("\(indent){")
    for (valueIndex, value) in enumType.value.enumerated() {
      guard let found = cases.first(where: { $0.protoName == (value.name ?? "") }) else {
        continue
      }
      lines(model.doc(entry.file, entry.path + [2, Int32(valueIndex)], indent: i2))
      line("\(i2)case \(found.name)  // = \(found.number)")
    }
    line(
      "\(i2)/// A value this version of the schema does not know; kept so it survives a round trip."
    )
    line("\(i2)case unrecognized(Int32)")
    line()
    line("\(i2)public init(rawValue: Int32) {")
    line("\(i2)  switch rawValue {")
    for c in cases { line("\(i2)  case \(c.number): self = .\(c.name)") }
    line("\(i2)  default: self = .unrecognized(rawValue)")
    line("\(i2)  }")
    line("\(i2)}")
    line()
    line("\(i2)public var rawValue: Int32 {")
    line("\(i2)  switch self {")
    for c in cases { line("\(i2)  case .\(c.name): \(c.number)") }
    line("\(i2)  case .unrecognized(let value): value")
    line("\(i2)  }")
    line("\(i2)}")
    line()
    line("\(i2)public static let allCases: [Self] = [")
    for c in cases { line("\(i2)  .\(c.name),") }
    line("\(i2)]")
    line()
    line("\(i2)/// The value's name in the .proto file, or its number when it has none.")
    line("\(i2)public var description: String {")
    line("\(i2)  switch self {")
    for c in cases { line("\(i2)  case .\(c.name): \"\(c.protoName)\"") }
    line("\(i2)  case .unrecognized(let value): \"\\(value)\"")
    line("\(i2)  }")
    line("\(i2)}")
    line("\(indent)}")
  }

  // MARK: Messages

  /// A stored field: its doc lines, Swift name, type and default.
  struct Declaration {
    var doc: [String]
    var name: String
    var type: String
    var defaultValue: String
  }

  mutating func message(_ full: String, indent: String) throws(GeneratorError) {
    let entry = model.messages[full]!
    let (file, message, path) = (entry.file, entry.message, entry.path)
    let protoFull = String(full.dropFirst())
    let cMessage: ProtocCNames.Message
    do {
      cMessage = try cNames.message(protoFull)
    } catch {
      throw GeneratorError(file: file, element: error.element, reason: error.reason)
    }
    let swiftName = String(model.swift[full]!.split(separator: ".").last!)
    let syntax = fileSyntax(file)
    var fields: [MessageField] = []
    for (index, field) in message.field.enumerated() {
      fields.append(
        try MessageField(
          field, index: index, message: protoFull, cType: cMessage.cType, syntax: syntax,
          file: file, model: model, cNames: cNames))
    }
    var oneofs: [(index: Int, members: [MessageField])] = []
    for field in fields {
      guard let index = field.proto.oneofIndex.map(Int.init) else { continue }
      if let at = oneofs.firstIndex(where: { $0.index == index }) {
        oneofs[at].members.append(field)
      } else {
        oneofs.append((index, [field]))
      }
    }
    // A oneof of one field named `_<field>` is how a proto3 `optional` field is written for
    // protoc-c (which rejects `optional`): in Swift it is simply an optional field.
    var optionals: [MessageField] = []
    oneofs.removeAll { oneof in
      let name = message.oneofDecl[oneof.index].name ?? ""
      guard oneof.members.count == 1, var member = oneof.members.first,
        name == "_" + (member.proto.name ?? "")
      else { return false }
      let caseMember = name.lowercased() + "_case"
      member.presentIf = "m.\(caseMember).rawValue == \(member.number)"
      member.markPresent = "c.pointee.\(caseMember) = .init(rawValue: \(member.number))"
      optionals.append(member)
      return true
    }
    oneofs.sort { $0.index < $1.index }
    let plain = fields.filter { $0.proto.oneofIndex == nil } + optionals

    lines(model.doc(file, path, indent: indent))
    line("\(indent)public struct \(SwiftNames.identifier(swiftName)): ProtoMessage {")
    let i2 = indent + "  "
    line("\(i2)public static let protoMessageName = \"\(protoFull)\"")
    line()
    var declarations: [Declaration] = []
    for field in plain {
      var doc = model.doc(file, path + [2, Int32(field.index)], indent: i2)
      if field.proto.options?.deprecated == true {
        // Not @available(deprecated): the bridge below must still copy the field.
        doc.append("\(i2)/// - Note: Deprecated in the .proto file.")
      }
      declarations.append(
        Declaration(
          doc: doc, name: field.id, type: declarationType(field),
          defaultValue: declarationDefault(field)))
    }
    for oneof in oneofs {
      let name = message.oneofDecl[oneof.index].name ?? ""
      declarations.append(
        Declaration(
          doc: model.doc(file, path + [8, Int32(oneof.index)], indent: i2),
          name: SwiftNames.identifier(SwiftNames.camel(name, upperFirst: false)),
          type: "\(SwiftNames.camel(name, upperFirst: true))?", defaultValue: "nil"))
    }
    declarations.append(
      Declaration(
        doc: [
          "\(i2)/// Fields this schema does not know, kept as they arrived and sent again on encode."
        ], name: "unknownFields", type: "ProtoUnknownFields", defaultValue: "ProtoUnknownFields()"))
    if cowMessages.contains(full) {
      cowFields(swiftName, declarations, i2)
    } else {
      for declaration in declarations {
        lines(declaration.doc)
        if declaration.name == "unknownFields" {
          line("\(i2)public var unknownFields = ProtoUnknownFields()")
        } else {
          line(
            "\(i2)public var \(declaration.name): \(declaration.type) = \(declaration.defaultValue)"
          )
        }
      }
    }
    line()
    if cowMessages.contains(full) {
      line("\(i2)public init() { storage = Storage() }")
      line()
      line("\(i2)/// A value over `storage`, shared with the values that hold it already.")
      line("\(i2)@usableFromInline init(storage: Storage) { self.storage = storage }")
    } else {
      line("\(i2)public init() {}")
    }
    line()
    line(
      "\(i2)public init(serializedBytes bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError) {"
    )
    line("\(i2)  self = try Self.decodeFromWire(bytes)")
    line("\(i2)}")
    line()
    line("\(i2)public func encode(appendingTo buffer: inout [UInt8]) {")
    line("\(i2)  encodeDirect(appendingTo: &buffer)")
    line("\(i2)}")
    for oneof in oneofs {
      line()
      lines(model.doc(file, path + [8, Int32(oneof.index)], indent: i2))
      let name = message.oneofDecl[oneof.index].name ?? ""
      line("\(i2)public enum \(SwiftNames.camel(name, upperFirst: true)): Hashable, Sendable {")
      for field in oneof.members {
        lines(model.doc(file, path + [2, Int32(field.index)], indent: i2 + "  "))
        line("\(i2)  case \(field.id)(\(field.swift))")
      }
      line("\(i2)}")
    }
    for nested in message.nestedType where nested.options?.mapEntry != true {
      line()
      try self.message("\(full).\(nested.name ?? "")", indent: i2)
    }
    for nested in message.enumType {
      line()
      enumeration("\(full).\(nested.name ?? "")", indent: i2)
    }
    line("\(indent)}")
    bridges.append(
      Bridge(
        full: full, lower: cMessage.lower, cType: cMessage.cType, plain: plain, oneofs: oneofs,
        message: message))
  }

  private func fileSyntax(_ file: String) -> String { model.syntaxes[file] ?? "" }

  /// The fields of a copy-on-write message: a storage class shared by copies, accessors that
  /// copy it before the first change of a shared one, and == and hash(into:) over the fields
  /// (the storage class is not Hashable).
  private mutating func cowFields(_ swiftName: String, _ declarations: [Declaration], _ i2: String)
  {
    let (i3, i4) = (i2 + "  ", i2 + "    ")
    line(
      "\(i2)/// The fields, shared by copies of this message until one of them changes (copy-on-write)."
    )
    line(
      "\(i2)/// Usable from inline code, so that other modules read a field in place rather than")
    line("\(i2)/// through a call (and a retain of the storage) per read.")
    line("\(i2)@usableFromInline final class Storage: @unchecked Sendable {")
    line(
      "\(i3)// @unchecked Sendable: changed only through a struct that holds the only reference.")
    line(
      "\(i3)// @exclusivity(unchecked): a class's stored properties are checked at run time on every"
    )
    line(
      "\(i3)// access (a third of a field read); the struct's own accesses are checked statically.")
    for d in declarations {
      line(
        "\(i3)@usableFromInline @exclusivity(unchecked) var \(d.name): \(d.type) = \(d.defaultValue)"
      )
    }
    line()
    line("\(i3)init() {}")
    line()
    line("\(i3)init(copying other: Storage) {")
    for d in declarations { line("\(i4)\(d.name) = other.\(d.name)") }
    line("\(i3)}")
    line("\(i2)}")
    line()
    line("\(i2)@usableFromInline var storage: Storage")
    line()
    line("\(i2)/// The storage, copied first if another copy of this message shares it.")
    line("\(i2)private mutating func uniqueStorage() -> Storage {")
    line("\(i3)if !isKnownUniquelyReferenced(&storage) { storage = Storage(copying: storage) }")
    line("\(i3)return storage")
    line("\(i2)}")
    for d in declarations {
      line()
      lines(d.doc)
      line("\(i2)public var \(d.name): \(d.type) {")
      line("\(i3)@inlinable get { storage.\(d.name) }")
      line("\(i3)set { uniqueStorage().\(d.name) = newValue }")
      line("\(i3)_modify { yield &uniqueStorage().\(d.name) }")
      line("\(i2)}")
    }
    line()
    line("\(i2)public static func == (lhs: \(swiftName), rhs: \(swiftName)) -> Bool {")
    line("\(i3)if lhs.storage === rhs.storage { return true }")
    line("\(i3)let (a, b) = (lhs.storage, rhs.storage)")
    for d in declarations { line("\(i3)guard a.\(d.name) == b.\(d.name) else { return false }") }
    line("\(i3)return true")
    line("\(i2)}")
    line()
    line("\(i2)public func hash(into hasher: inout Hasher) {")
    for d in declarations { line("\(i3)hasher.combine(storage.\(d.name))") }
    line("\(i2)}")
  }

  // MARK: Field types

  /// The Swift types of a map field's key and value.
  func mapTypes(_ field: MessageField) -> (key: String, value: String) {
    let entry = model.messages[field.proto.typeName ?? ""]!.message
    return (scalarSwift(entry.field[0]), scalarSwift(entry.field[1]))
  }

  func scalarSwift(_ field: GoogleProtobuf.FieldDescriptorProto) -> String {
    switch field.type {
    case .message?, .enum?: model.swift[field.typeName ?? ""] ?? ""
    default: MessageField.scalar(field.type ?? .unrecognized(0))?.swift ?? ""
    }
  }

  private func declarationType(_ field: MessageField) -> String {
    if field.map {
      let (key, value) = mapTypes(field)
      return "[\(key): \(value)]"
    }
    if field.repeated { return "[\(field.swift)]" }
    if field.kind == .message || field.presentIf != nil { return "\(field.swift)?" }
    if case .wrapper = field.kind { return "\(field.swift)?" }
    return field.swift
  }

  private func declarationDefault(_ field: MessageField) -> String {
    if field.presentIf != nil { return "nil" }
    if field.map { return "[:]" }
    if field.repeated { return "[]" }
    return field.defaultValue
  }
}
