import GRPCWireGenerator
import ProtoDescriptors
import Testing

/// Services the stubs cannot name as they are: the generator fails with the file, the RPC and
/// why, rather than writing code that does not compile.
@Suite("Service stubs: names that cannot be mapped")
struct StubErrorTests {
  /// `acme/orders.proto` (package `acme.orders`): message `Order`, and service `Orders` with
  /// unary RPCs of these names.
  static func set(rpcs: [String]) -> GoogleProtobuf.FileDescriptorSet {
    var message = GoogleProtobuf.DescriptorProto()
    message.name = "Order"
    var service = GoogleProtobuf.ServiceDescriptorProto()
    service.name = "Orders"
    service.method = rpcs.map {
      var method = GoogleProtobuf.MethodDescriptorProto()
      method.name = $0
      method.inputType = ".acme.orders.Order"
      method.outputType = ".acme.orders.Order"
      return method
    }
    var file = GoogleProtobuf.FileDescriptorProto()
    file.name = "acme/orders.proto"
    file.package = "acme.orders"
    file.messageType = [message]
    file.service = [service]
    var set = GoogleProtobuf.FileDescriptorSet()
    set.file = [file]
    return set
  }

  static func generate(_ set: GoogleProtobuf.FileDescriptorSet) throws(GeneratorError) -> [String] {
    try StubFiles.generate(
      set, protos: ["acme/orders.proto"], module: "Orders", namespaces: [:], access: "public"
    ).map(\.text)
  }

  @Test("two RPCs whose Swift names are the same")
  func sameSwiftName() {
    #expect(
      throws: GeneratorError(
        file: "acme/orders.proto", element: "rpc Orders.get",
        reason: "its Swift name `get` is also rpc Orders.Get's")
    ) {
      try Self.generate(Self.set(rpcs: ["Get", "get"]))
    }
  }

  @Test("an RPC named like the client's channel property")
  func channel() {
    #expect(
      throws: GeneratorError(
        file: "acme/orders.proto", element: "rpc Orders.Channel",
        reason: "its Swift name `channel` is the generated Client's own property")
    ) {
      try Self.generate(Self.set(rpcs: ["Channel"]))
    }
  }

  @Test("an RPC named like another RPC's loop-driven variant (`startGet` beside `get`)")
  func loopVariant() throws {
    #expect(
      throws: GeneratorError(
        file: "acme/orders.proto", element: "rpc Orders.StartGet",
        reason: "its Swift name `startGet` is also the loop-driven variant of rpc Orders.Get")
    ) {
      try Self.generate(Self.set(rpcs: ["Get", "StartGet"]))
    }
    // A client-streaming Get has no loop-driven variant: `startGet` is StartGet's alone.
    var set = Self.set(rpcs: ["Get", "StartGet"])
    set.file[0].service[0].method[0].clientStreaming = true
    let text = try Self.generate(set).joined()
    // One loop-driven variant (a completion), StartGet's: `startStartGet`.
    #expect(text.components(separatedBy: "completion: @escaping").count == 2)
    #expect(text.contains("public func startStartGet("))
  }

  @Test("an RPC whose type is not in the set")
  func missingType() {
    var set = Self.set(rpcs: ["Get"])
    set.file[0].service[0].method[0].outputType = ".acme.orders.Missing"
    #expect(
      throws: GeneratorError(
        file: "acme/orders.proto", element: "rpc Orders.Get",
        reason: "its response type .acme.orders.Missing is not a message of the descriptor set")
    ) {
      try Self.generate(set)
    }
  }

  @Test("a service in a file with no package")
  func noPackage() {
    var set = Self.set(rpcs: ["Get"])
    set.file[0].package = nil
    set.file[0].service[0].method[0].inputType = ".Order"
    set.file[0].service[0].method[0].outputType = ".Order"
    #expect(
      throws: GeneratorError(
        file: "acme/orders.proto", element: "service Orders",
        reason: "the file declares no package, so its services have no namespace to live in; "
          + "give it a `package`")
    ) {
      try Self.generate(set)
    }
  }

  @Test("a service named like a message of its package")
  func serviceNamedLikeMessage() {
    var set = Self.set(rpcs: ["Get"])
    set.file[0].service[0].name = "Order"
    #expect(
      throws: GeneratorError(
        file: "acme/orders.proto", element: "service Order",
        reason: "a message of package acme.orders has the same name, and both would be "
          + "AcmeOrders.Order in Swift")
    ) {
      try Self.generate(set)
    }
  }

  @Test("an RPC named like a Swift keyword is written in backticks; output is deterministic")
  func keyword() throws {
    let text = try #require(try Self.generate(Self.set(rpcs: ["Default", "Get"])).first)
    #expect(text.contains("public func `default`("))
    #expect(text.contains("AcmeOrders.Orders.`default`"))
    #expect(text.contains("register(unary: AcmeOrders.Orders.get)"))
    #expect(try Self.generate(Self.set(rpcs: ["Default", "Get"])) == [text])
  }
}
