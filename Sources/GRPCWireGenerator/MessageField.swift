import ProtoDescriptors

/// How one proto field looks in Swift and in protobuf-c's struct.
struct MessageField {
  enum Kind: Equatable {
    case plain, bool, string, bytes, enumeration, message
    /// A `google.protobuf.*Value` wrapper, a Swift optional scalar; the payload says how its
    /// `value` reads: `double`, `float`, `int`, `bool`, `string` or `bytes`.
    case wrapper(String)
  }

  typealias FieldType = GoogleProtobuf.FieldDescriptorProto.TypeEnum

  /// Message fields of these types become optional Swift scalars (`Int32?`), as the wrappers
  /// exist only to give a scalar presence.
  static let wrappers: [String: (swift: String, kind: String)] = [
    ".google.protobuf.DoubleValue": ("Double", "double"),
    ".google.protobuf.FloatValue": ("Float", "float"),
    ".google.protobuf.Int64Value": ("Int64", "int"),
    ".google.protobuf.UInt64Value": ("UInt64", "int"),
    ".google.protobuf.Int32Value": ("Int32", "int"),
    ".google.protobuf.UInt32Value": ("UInt32", "int"),
    ".google.protobuf.BoolValue": ("Bool", "bool"),
    ".google.protobuf.StringValue": ("String", "string"),
    ".google.protobuf.BytesValue": ("[UInt8]", "bytes"),
  ]

  /// A scalar's Swift type, default and kind.
  static func scalar(_ type: FieldType) -> (swift: String, defaultValue: String, kind: Kind)? {
    switch type {
    case .double: ("Double", "0", .plain)
    case .float: ("Float", "0", .plain)
    case .int64, .sfixed64, .sint64: ("Int64", "0", .plain)
    case .uint64, .fixed64: ("UInt64", "0", .plain)
    case .int32, .sfixed32, .sint32: ("Int32", "0", .plain)
    case .fixed32, .uint32: ("UInt32", "0", .plain)
    case .bool: ("Bool", "false", .bool)
    case .string: ("String", "\"\"", .string)
    case .bytes: ("[UInt8]", "[]", .bytes)
    case .group, .message, .enum, .unrecognized: nil
    }
  }

  /// Members every generated message has; a proto field with one of these names would
  /// shadow it.
  static let reservedMembers: Set<String> = [
    "unknownFields", "protoMessageName", "serializedBytes", "encode",
  ]

  var proto: GoogleProtobuf.FieldDescriptorProto
  /// The field's index in its message's `field` list (its comment's location).
  var index: Int
  var number: Int32 { proto.number ?? 0 }
  var name: String
  /// `name`, in backticks where Swift reserves it.
  var id: String
  var cMember: String
  var cQuantifier: String?
  var repeated: Bool
  var map: Bool
  /// Set for a field with presence and a Swift optional: a one-field oneof standing in for
  /// proto3 `optional`, or a proto2 `optional` scalar. A Bool expression over the C message
  /// `m` saying the field is present, and the statement that marks it present in `c` (nil
  /// when setting the member is enough).
  var presentIf: String?
  var markPresent: String?
  var kind: Kind
  var swift: String
  var defaultValue: String
  /// How protobuf-c packs it (the direct writer writes the same): a packed repeated scalar is
  /// one length-delimited field; a required field is written even at its zero value; a proto3
  /// field without presence is not.
  var packed: Bool
  var required: Bool
  var proto3: Bool

  init(
    _ field: GoogleProtobuf.FieldDescriptorProto, index: Int, message: String, cType: String,
    syntax: String, file: String, model: MessageModel, cNames: ProtocCNames
  ) throws(GeneratorError) {
    proto = field
    self.index = index
    let protoName = field.name ?? ""
    let element = "field \(message).\(protoName)"
    name = SwiftNames.camel(protoName, upperFirst: false)
    if Self.reservedMembers.contains(name) {
      throw GeneratorError(
        file: file, element: element,
        reason: "its Swift name `\(name)` is a member every generated message has")
    }
    id = SwiftNames.identifier(name)
    let cField: ProtocCNames.Field
    do {
      cField = try cNames.field(cType, field.number ?? 0)
    } catch {
      throw GeneratorError(file: file, element: element, reason: error.reason)
    }
    // protoc-c escapes C keywords (`class_`), not Swift's: `m.init` would name an initializer.
    cMember = SwiftNames.member(cField.member)
    cQuantifier = cField.quantifier.map(SwiftNames.member)
    packed = cField.packed
    required = field.label == .required
    proto3 = syntax == "proto3"
    repeated = field.label == .repeated
    map = repeated && model.isMapEntry(field.typeName)
    if field.proto3Optional == true {
      throw GeneratorError(
        file: file, element: element,
        reason: "proto3 `optional` is not supported by protoc-c 1.4; write it as a oneof "
          + "`_\(protoName)` of the one field")
    }
    let type = field.type ?? .unrecognized(0)
    switch type {
    case .group:
      throw GeneratorError(file: file, element: element, reason: "groups are not supported")
    case .message:
      if !repeated, let wrapper = Self.wrappers[field.typeName ?? ""] {
        (kind, swift, defaultValue) = (.wrapper(wrapper.kind), wrapper.swift, "nil")
      } else {
        swift = try model.swiftType(field.typeName, file: file, element: element)
        (kind, defaultValue) = (.message, "nil")
      }
    case .enum:
      swift = try model.swiftType(field.typeName, file: file, element: element)
      guard let enumType = model.enums[field.typeName ?? ""]?.enumType,
        let first = enumType.value.first?.name
      else {
        throw GeneratorError(file: file, element: element, reason: "its enum has no values")
      }
      kind = .enumeration
      defaultValue =
        "."
        + SwiftNames.identifier(SwiftNames.enumCaseName(enum: enumType.name ?? "", value: first))
    default:
      guard let scalar = Self.scalar(type) else {
        throw GeneratorError(file: file, element: element, reason: "its type \(type) is unknown")
      }
      (swift, defaultValue, kind) = scalar
    }
    var isWrapper = false
    if case .wrapper = kind { isWrapper = true }
    // A wrapper field is an optional already: its presence is the C pointer's.
    if syntax == "" || syntax == "proto2", field.label == .optional, kind != .message,
      !isWrapper, field.oneofIndex == nil
    {
      // protoc-c gives a proto2 optional scalar a `has_` member; a string has none, as NULL
      // says it is absent. The .proto's [default = …] is the reader's to apply.
      if let quantifier = cQuantifier {
        presentIf = "m.\(quantifier) != 0"
        markPresent = "c.pointee.\(quantifier) = 1"
      } else {
        presentIf = "m.\(cMember) != nil"
      }
    }
  }
}
