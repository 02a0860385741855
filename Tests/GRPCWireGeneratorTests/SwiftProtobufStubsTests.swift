import GRPCWireGenerator
import PeerSupport
import ProtoDescriptors
import Testing

/// `--messages swift-protobuf`: the names protoc-gen-swift gives messages, the stubs written
/// over them, what cannot be named, and the command's refusals. (The stubs compiled and
/// called against grpcio: SwiftProtobufStubTests.)
@Suite("Stubs over swift-protobuf's messages")
struct SwiftProtobufStubsTests {
  static func message(_ name: String, nested: [GoogleProtobuf.DescriptorProto] = [])
    -> GoogleProtobuf.DescriptorProto
  {
    var message = GoogleProtobuf.DescriptorProto()
    message.name = name
    message.nestedType = nested
    return message
  }

  static func file(
    _ name: String, package: String?, swiftPrefix: String? = nil,
    messages: [GoogleProtobuf.DescriptorProto], rpcs: [(String, String, String, Bool, Bool)] = []
  ) -> GoogleProtobuf.FileDescriptorProto {
    var file = GoogleProtobuf.FileDescriptorProto()
    file.name = name
    file.package = package
    if let swiftPrefix {
      var options = GoogleProtobuf.FileOptions()
      options.swiftPrefix = swiftPrefix
      file.options = options
    }
    file.messageType = messages
    if !rpcs.isEmpty {
      var service = GoogleProtobuf.ServiceDescriptorProto()
      service.name = "Dispatch"
      service.method = rpcs.map { name, input, output, clientStreaming, serverStreaming in
        var method = GoogleProtobuf.MethodDescriptorProto()
        method.name = name
        method.inputType = input
        method.outputType = output
        method.clientStreaming = clientStreaming
        method.serverStreaming = serverStreaming
        return method
      }
      file.service = [service]
    }
    return file
  }

  static func set(_ files: GoogleProtobuf.FileDescriptorProto...)
    -> GoogleProtobuf.FileDescriptorSet
  {
    var set = GoogleProtobuf.FileDescriptorSet()
    set.file = files
    return set
  }

  // The expected names are protoc-gen-swift 1.39's own output for these declarations.
  @Test("messages are named as protoc-gen-swift names them")
  func names() {
    let names = TypeIndex(
      swiftProtobuf: Self.set(
        Self.file(
          "a.proto", package: "acme.dispatch_api.v1",
          messages: [
            Self.message("Order", nested: [Self.message("Line"), Self.message("Type")]),
            Self.message("TypeMessage", nested: [Self.message("TypeMessage")]),
          ]),
        Self.file(
          "b.proto", package: "acme.b", swiftPrefix: "AB", messages: [Self.message("Order")]),
        Self.file(
          "c.proto", package: "acme.c", swiftPrefix: "",
          messages: [Self.message("Type"), Self.message("Int"), Self.message("Plain")]),
        Self.file("d.proto", package: nil, messages: [Self.message("Loose")]),
        Self.file(
          "google/protobuf/empty.proto", package: "google.protobuf",
          messages: [Self.message("Empty")])
      )
    ).swiftNames
    #expect(names[".acme.dispatch_api.v1.Order"] == "Acme_DispatchApi_V1_Order")
    #expect(names[".acme.dispatch_api.v1.Order.Line"] == "Acme_DispatchApi_V1_Order.Line")
    #expect(names[".acme.dispatch_api.v1.Order.Type"] == "Acme_DispatchApi_V1_Order.TypeMessage")
    #expect(
      names[".acme.dispatch_api.v1.TypeMessage.TypeMessage"]
        == "Acme_DispatchApi_V1_TypeMessage.TypeMessageMessage")
    #expect(names[".acme.b.Order"] == "ABOrder")
    #expect(names[".acme.c.Type"] == "TypeMessage")
    #expect(names[".acme.c.Int"] == "IntMessage")
    #expect(names[".acme.c.Plain"] == "Plain")
    #expect(names[".Loose"] == "Loose")
    #expect(names[".google.protobuf.Empty"] == "Google_Protobuf_Empty")
  }

  static let dispatch = file(
    "acme/dispatch.proto", package: "acme.dispatch.v1",
    messages: [message("Order"), message("Dispatch")],
    rpcs: [
      ("GetOrder", ".acme.dispatch.v1.Order", ".google.protobuf.Empty", false, false),
      ("Watch", ".acme.dispatch.v1.Order", ".acme.dispatch.v1.Order", false, true),
      ("Upload", ".acme.dispatch.v1.Order", ".acme.dispatch.v1.Order", true, false),
      ("Chat", ".acme.dispatch.v1.Order", ".acme.dispatch.v1.Order", true, true),
    ])
  static let empty = file(
    "google/protobuf/empty.proto", package: "google.protobuf", messages: [message("Empty")])

  static func generate(
    _ set: GoogleProtobuf.FileDescriptorSet, module: String = "Dispatch",
    namespaces: [String: String] = [:]
  ) throws(GeneratorError) -> [String: String] {
    try StubFiles.generate(
      set, protos: ["acme/dispatch.proto"], module: module, namespaces: namespaces,
      access: "public", messages: .swiftProtobuf
    ).reduce(into: [:]) { $0[$1.name] = $1.text }
  }

  @Test("stubs name protoc-gen-swift's types, declare their descriptors, import no ProtoRuntime")
  func stubs() throws {
    let files = try Self.generate(Self.set(Self.dispatch, Self.empty))
    #expect(files.keys.sorted() == ["SwiftProtobufSupport.grpc.swift", "acme_dispatch.grpc.swift"])
    let stubs = try #require(files["acme_dispatch.grpc.swift"])
    let support = try #require(files["SwiftProtobufSupport.grpc.swift"])
    for text in [stubs, support] {
      let imports = text.split(separator: "\n").filter { $0.contains("import ") }
      #expect(imports == ["import GRPCWire", "import SwiftProtobuf"])
    }
    // A message named like the service is no clash: the message is Acme_Dispatch_V1_Dispatch.
    #expect(
      stubs.contains(
        "public static let getOrder = SwiftProtobufMethod<Acme_Dispatch_V1_Order, Google_Protobuf_Empty>("
      ))
    #expect(stubs.contains("path: \"/acme.dispatch.v1.Dispatch/Watch\", kind: .serverStreaming)"))
    #expect(stubs.contains("path: \"/acme.dispatch.v1.Dispatch/Upload\", kind: .clientStreaming)"))
    #expect(
      stubs.contains("path: \"/acme.dispatch.v1.Dispatch/Chat\", kind: .bidirectionalStreaming)"))
    #expect(stubs.contains("extension AcmeDispatchV1.Dispatch {"))
    #expect(stubs.contains("public func getOrder("))
    #expect(support.contains("public enum AcmeDispatchV1 {}"))
    #expect(try Self.generate(Self.set(Self.dispatch, Self.empty)) == files)
  }

  @Test("a namespace that is also a message's Swift name fails, naming the service")
  func namespaceTakenByMessage() {
    var file = Self.dispatch
    file.options = GoogleProtobuf.FileOptions()
    file.options?.swiftPrefix = ""
    file.messageType.append(Self.message("AcmeDispatchV1"))
    #expect(
      throws: GeneratorError(
        file: "acme/dispatch.proto", element: "service Dispatch",
        reason: "its namespace AcmeDispatchV1 is also the name of a message protoc-gen-swift "
          + "writes; name another with --namespace")
    ) {
      try Self.generate(Self.set(file, Self.empty))
    }
    #expect(
      (try? Self.generate(Self.set(file, Self.empty), namespaces: ["acme.dispatch.v1": "Acme"]))
        != nil)
  }

  @Test("a namespace that is the module's name fails")
  func namespaceIsModule() {
    #expect(
      throws: GeneratorError(
        file: "acme/dispatch.proto", element: "service Dispatch",
        reason: "its namespace AcmeDispatchV1 is also the name of a module; name another with "
          + "--namespace")
    ) {
      try Self.generate(Self.set(Self.dispatch, Self.empty), module: "AcmeDispatchV1")
    }
  }

  @Test(
    "the command refuses an unknown --messages and C-target options with swift-protobuf",
    arguments: [
      (
        ["--messages", "protobuf"], "--messages must be protobuf-c or swift-protobuf, not protobuf"
      ),
      (
        ["--messages", "swift-protobuf", "--c-dir", "c", "--cow-message", ".a.B"],
        "--messages swift-protobuf writes only stubs (protoc-gen-swift writes the messages): "
          + "--c-dir, --cow-message is for --messages protobuf-c"
      ),
      (
        ["--messages", "swift-protobuf", "--no-stubs"],
        "--messages swift-protobuf writes only stubs: --no-stubs would leave nothing to write"
      ),
    ])
  func refusals(_ options: [String], _ message: String) async throws {
    let result = try await ToolProcess.run(
      "grpc-wire-gen",
      ["--descriptor-set", "set.pb", "--module", "M", "--output", "out"] + options + ["a.proto"])
    #expect(result.status != 0)
    #expect(result.stderr.contains("Error: \(message)"), "\(result.stderr)")
  }
}
