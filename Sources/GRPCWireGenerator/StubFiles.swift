public import ProtoDescriptors

/// The stub files of a module: for each of `protos` (named as protoc names them) that declares
/// a service, `<path with / as _>.grpc.swift` and its text.
public enum StubFiles {
  /// The file name of `proto`'s stubs: `grpc/testing/test.proto` → `grpc_testing_test.grpc.swift`.
  public static func name(of proto: String) -> String {
    let stem = proto.hasSuffix(".proto") ? String(proto.dropLast(".proto".count)) : proto
    return stem.replacingOccurrences(of: "/", with: "_") + ".grpc.swift"
  }

  /// Throws ``GeneratorError`` when a proto is not in `set`, or its services cannot be mapped.
  ///
  /// With `messages: .swiftProtobuf` the messages are protoc-gen-swift's (named by its rules,
  /// ``TypeIndex/init(swiftProtobuf:)``), and when any proto declares a service the
  /// module's ``SwiftProtobufSupport`` file comes too, declaring the services' namespaces.
  public static func generate(
    _ set: GoogleProtobuf.FileDescriptorSet, protos: [String], module: String,
    namespaces: [String: String], access: String,
    messages: ServiceStubs.Messages = .protobufC, header: GeneratedHeader = .codeGen
  ) throws(GeneratorError) -> [(name: String, text: String)] {
    let types =
      switch messages {
      case .protobufC: TypeIndex(set, namespaces: namespaces)
      case .swiftProtobuf: TypeIndex(swiftProtobuf: set)
      }
    let stubs = ServiceStubs(
      types: types, namespaces: namespaces, module: module, access: access, messages: messages,
      header: header)
    var files: [(name: String, text: String)] = []
    // Namespace -> the file and service that first needs it.
    var used: [String: (file: String, service: String)] = [:]
    for proto in protos {
      guard let file = set.file.first(where: { $0.name == proto }) else {
        throw GeneratorError(file: proto, element: "", reason: "not in the descriptor set")
      }
      if let text = try stubs.file(file) { files.append((name(of: proto), text)) }
      let package = file.package ?? ""
      let namespace = namespaces[package] ?? SwiftNames.defaultNamespace(ofPackage: package)
      if let service = file.service.first, used[namespace] == nil {
        used[namespace] = (proto, service.name ?? "")
      }
    }
    guard messages == .swiftProtobuf, !files.isEmpty else { return files }
    let topLevel = Set(types.swiftNames.values.filter { !$0.contains(".") })
    let taken = topLevel.union(["GRPCWire", "SwiftProtobuf", module])
    for (namespace, first) in used where taken.contains(namespace) {
      throw GeneratorError(
        file: first.file, element: "service \(first.service)",
        reason: "its namespace \(namespace) is also the name of "
          + (topLevel.contains(namespace) ? "a message protoc-gen-swift writes" : "a module")
          + "; name another with --namespace")
    }
    files.append(
      (
        SwiftProtobufSupport.fileName,
        SwiftProtobufSupport.file(namespaces: used.keys.sorted(), access: access, header: header)
      ))
    return files
  }
}

extension String {
  func replacingOccurrences(of target: String, with replacement: String) -> String {
    split(separator: Character(target), omittingEmptySubsequences: false).joined(
      separator: replacement)
  }
}
