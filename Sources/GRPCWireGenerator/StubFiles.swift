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
  public static func generate(
    _ set: GoogleProtobuf.FileDescriptorSet, protos: [String], module: String,
    namespaces: [String: String], access: String
  ) throws(GeneratorError) -> [(name: String, text: String)] {
    let stubs = ServiceStubs(
      types: TypeIndex(set, namespaces: namespaces), namespaces: namespaces, module: module,
      access: access)
    var files: [(name: String, text: String)] = []
    for proto in protos {
      guard let file = set.file.first(where: { $0.name == proto }) else {
        throw GeneratorError(file: proto, element: "", reason: "not in the descriptor set")
      }
      if let text = try stubs.file(file) { files.append((name(of: proto), text)) }
    }
    return files
  }
}

extension String {
  func replacingOccurrences(of target: String, with replacement: String) -> String {
    split(separator: Character(target), omittingEmptySubsequences: false).joined(
      separator: replacement)
  }
}
