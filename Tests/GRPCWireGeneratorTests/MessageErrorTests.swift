import GRPCWireGenerator
import ProtoDescriptors
import Testing

/// Messages the message layer cannot write as compiling Swift: the generator fails with the
/// file, the element and why, from the descriptor set alone (before protoc-c, which crashes on
/// a group), rather than crashing or writing code that does not compile.
@Suite("Message layer: names and constructs that cannot be mapped")
struct MessageErrorTests {
  typealias Field = GoogleProtobuf.FieldDescriptorProto

  static func field(_ name: String, _ number: Int32, _ type: Field.TypeEnum = .int32) -> Field {
    var field = Field()
    field.name = name
    field.number = number
    field.label = .optional
    field.type = type
    return field
  }

  /// `acme/orders.proto` (package `acme.orders`, proto2) with message `Order` of these fields.
  static func set(_ fields: [Field], messageName: String = "Order")
    -> GoogleProtobuf.FileDescriptorSet
  {
    var message = GoogleProtobuf.DescriptorProto()
    message.name = messageName
    message.field = fields
    var file = GoogleProtobuf.FileDescriptorProto()
    file.name = "acme/orders.proto"
    file.package = "acme.orders"
    file.messageType = [message]
    var set = GoogleProtobuf.FileDescriptorSet()
    set.file = [file]
    return set
  }

  static func check(_ set: GoogleProtobuf.FileDescriptorSet) throws(GeneratorError) {
    try MessageFiles.check(set, protos: ["acme/orders.proto"], namespaces: [:])
  }

  @Test("a proto2 group fails before protoc-c sees it")
  func group() throws {
    var item = GoogleProtobuf.DescriptorProto()
    item.name = "Item"
    var set = Self.set([Self.field("item", 1, .group)])
    set.file[0].messageType[0].field[0].typeName = ".acme.orders.Order.Item"
    set.file[0].messageType[0].nestedType = [item]
    let error = try #require(throws: GeneratorError.self) { try Self.check(set) }
    #expect(error.file == "acme/orders.proto")
    #expect(error.element == "field acme.orders.Order.item")
    #expect(error.reason.hasPrefix("groups are not supported (protoc-c 1.4 crashes on them)"))
  }

  @Test(
    "a field named like a name the generated code uses beside the fields",
    arguments: ["self", "c", "arena", "storage", "hash_value"])
  func bridgeName(_ name: String) throws {
    let error = try #require(throws: GeneratorError.self) {
      try Self.check(Self.set([Self.field(name, 1)]))
    }
    #expect(error.file == "acme/orders.proto")
    #expect(error.element == "field acme.orders.Order.\(name)")
    #expect(error.reason.contains("is a name the generated code uses beside the fields"))
  }

  @Test("a field named like a member every message has")
  func reservedMember() {
    #expect(
      throws: GeneratorError(
        file: "acme/orders.proto", element: "field acme.orders.Order.unknown_fields",
        reason: "its Swift name `unknownFields` is a member every generated message has; "
          + "rename the field")
    ) {
      try Self.check(Self.set([Self.field("unknown_fields", 1)]))
    }
  }

  @Test("two fields with one Swift name")
  func sameSwiftName() {
    #expect(
      throws: GeneratorError(
        file: "acme/orders.proto", element: "field acme.orders.Order.lineID",
        reason: "its Swift name `lineID` is also field line_id's")
    ) {
      try Self.check(Self.set([Self.field("line_id", 1), Self.field("lineID", 2)]))
    }
  }

  @Test("a message named like its package's namespace")
  func messageNamedLikeNamespace() {
    #expect(
      throws: GeneratorError(
        file: "acme/orders.proto", element: "message acme.orders.AcmeOrders",
        reason: "its Swift name `AcmeOrders` is the namespace of package acme.orders, which it "
          + "would hide from the types beside it; rename it, or give that package another "
          + "namespace with --namespace acme.orders=Name")
    ) {
      try Self.check(Self.set([Self.field("id", 1)], messageName: "AcmeOrders"))
    }
  }

  @Test("the namespace rule is the one --namespace overrides")
  func namespaceOverride() throws {
    try MessageFiles.check(
      Self.set([Self.field("id", 1)], messageName: "AcmeOrders"), protos: ["acme/orders.proto"],
      namespaces: ["acme.orders": "Orders"])
  }

  @Test("Swift keywords as field names are not rejected (GeneratorFixtures compiles them)")
  func keywords() throws {
    let names = ["class", "protocol", "init", "default", "where", "type", "in", "true"]
    try Self.check(
      Self.set(names.enumerated().map { Self.field($0.element, Int32($0.offset + 1)) }))
  }

  @Test("a oneof whose Swift type is a nested type's name")
  func oneofNamedLikeNestedType() throws {
    var kind = GoogleProtobuf.DescriptorProto()
    kind.name = "Kind"
    var set = Self.set([Self.field("a", 1)])
    var oneof = GoogleProtobuf.OneofDescriptorProto()
    oneof.name = "kind"
    set.file[0].messageType[0].oneofDecl = [oneof]
    set.file[0].messageType[0].field[0].oneofIndex = 0
    set.file[0].messageType[0].nestedType = [kind]
    let error = try #require(throws: GeneratorError.self) { try Self.check(set) }
    #expect(error.element == "oneof acme.orders.Order.kind")
    #expect(error.reason.hasPrefix("its Swift type `acme.orders.Order.Kind` is also"))
  }

  @Test("messages in a file with no package")
  func noPackage() {
    var set = Self.set([Self.field("id", 1)])
    set.file[0].package = nil
    #expect(
      throws: GeneratorError(
        file: "acme/orders.proto", element: "",
        reason: "the file declares no package, so its types have no namespace to live in; "
          + "give it a `package`")
    ) {
      try Self.check(set)
    }
  }
}
