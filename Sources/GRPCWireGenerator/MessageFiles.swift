public import ProtoDescriptors

/// The message layer of one module: per .proto file its Swift types over protobuf-c, their
/// `ProtoMethod` descriptors and the file's own descriptor; the module's namespaces and
/// descriptor index; and its C target (protoc-c's files, an umbrella header with one
/// descriptor accessor per message, a module map naming every header).
///
/// Deterministic: the same input gives the same files, byte for byte.
public enum MessageFiles {
  /// The module every other one builds on: the runtime, the well-known types and
  /// `google.rpc`. Its protos may import only its own; another module's, its own and these.
  public static let runtimeModule = "ProtoRuntime"

  /// The proto packages whose types live in ``runtimeModule``.
  public static let runtimePackages: Set<String> = ["google.protobuf", "google.rpc"]

  /// What one module is made of.
  public struct Output: Sendable {
    /// Files of `Sources/<Module>/Generated`: name and text.
    public var swift: [(name: String, text: String)] = []
    /// Files of `Sources/<Module>C`: path under it and text.
    public var c: [(path: String, text: String)] = []
  }

  /// `grpc/testing/test.proto` → `grpc_testing_test.pb.swift`.
  public static func swiftFileName(of proto: String) -> String {
    let stem = proto.hasSuffix(".proto") ? String(proto.dropLast(".proto".count)) : proto
    return stem.replacingOccurrences(of: "/", with: "_") + ".pb.swift"
  }

  /// Generates `module` from `protos` (named as protoc names them, each in `set`).
  ///
  /// - Parameters:
  ///   - cFiles: protoc-c's output for (at least) `protos`, by path relative to its output
  ///     folder (`grpc/testing/test.pb-c.c`): its `.pb-c.c` files are read for the exact C
  ///     names, and each proto's `.pb-c.c` and `.pb-c.h` are copied into the C target.
  ///   - cowMessages: full names (`.pkg.Message`) of messages kept in copy-on-write storage.
  ///   - access: `public`, `package` or `internal`: of the module's namespaces (and so of
  ///     every message, enum and method descriptor in them) and of its descriptor list.
  ///   - header: what each file's first lines say wrote it and how to regenerate it.
  /// - Throws: ``GeneratorError`` naming the file and element that cannot be generated.
  public static func generate(
    _ set: GoogleProtobuf.FileDescriptorSet, protos: [String], module: String,
    namespaces: [String: String], cowMessages: Set<String>, cFiles: [String: String],
    access: String = "public", header: GeneratedHeader = .codeGen
  ) throws(GeneratorError) -> Output {
    try check(set, protos: protos, namespaces: namespaces)
    let model = MessageModel(set, namespaces: namespaces)
    let cNames = ProtocCNames(
      cSources: cFiles.keys.sorted().filter { $0.hasSuffix(".pb-c.c") }.map { cFiles[$0]! })
    let byName = Dictionary(set.file.map { ($0.name ?? "", $0) }, uniquingKeysWith: { a, _ in a })
    for proto in protos where byName[proto] == nil {
      throw GeneratorError(file: proto, element: "", reason: "not in the descriptor set")
    }
    let wanted = Set(protos)
    var output = Output()
    var accessors: [String] = []
    var descriptorNames: [String] = []
    var packages: [String] = []
    var moduleProtos: [String] = []
    // In the set's order: protoc lists a file after the files it imports.
    for file in set.file where wanted.contains(file.name ?? "") {
      let name = file.name ?? ""
      for dependency in file.dependency where !wanted.contains(dependency) {
        let package = byName[dependency]?.package ?? ""
        if !runtimePackages.contains(package) || dependency == "google/protobuf/descriptor.proto" {
          throw GeneratorError(
            file: name, element: "import \"\(dependency)\"",
            reason: "it is neither in \(module) nor in \(runtimeModule); generate it into "
              + "\(module) too")
        }
      }
      moduleProtos.append(name)
      packages.append(file.package ?? "")
      var writer = MessageWriter(model: model, cNames: cNames, cowMessages: cowMessages)
      try swiftFile(file, module: module, namespaces: namespaces, header: header, &writer)
      accessors += writer.bridges.map(\.lower) + writer.entryAccessors
      descriptorNames.append(FileDescriptorLiteral.propertyName(of: name))
      output.swift.append((swiftFileName(of: name), writer.out.text))
    }
    guard !moduleProtos.isEmpty else { return output }
    output.swift.append(
      (
        "Namespaces.pb.swift",
        namespaceFile(module, packages, namespaces, access: access, header: header)
      ))
    output.swift.append(
      (
        "FileDescriptors.pb.swift",
        FileDescriptorLiteral.index(
          module: module, names: descriptorNames, access: access, header: header)
      )
    )
    output.c = try cTarget(
      module + "C", protos: moduleProtos, accessors: accessors, cFiles: cFiles, header: header)
    return output
  }

  /// Fails for what the message layer of `protos` cannot write as compiling Swift (a
  /// `group`, a field named like a member of every message or like a name the generated code
  /// uses, two fields with one Swift name, a type named like a namespace), naming the file, the
  /// element and why. Needs only the descriptor set: run it before protoc-c, which crashes on a
  /// `group`. ``generate(_:protos:module:namespaces:cowMessages:cFiles:)`` runs it first.
  public static func check(
    _ set: GoogleProtobuf.FileDescriptorSet, protos: [String], namespaces: [String: String]
  ) throws(GeneratorError) {
    try MessageChecks.check(set, protos: Set(protos), namespaces: namespaces)
  }

  private static func swiftFile(
    _ file: GoogleProtobuf.FileDescriptorProto, module: String, namespaces: [String: String],
    header: GeneratedHeader, _ w: inout MessageWriter
  ) throws(GeneratorError) {
    let name = file.name ?? ""
    let package = file.package ?? ""
    w.lines(header.swift(from: name))
    w.line()
    if !file.messageType.isEmpty {
      // Public, though no user sees a C type: the bridges' witnesses name protobuf-c's types
      // and are @usableFromInline, as the runtime's @inlinable helpers, inlined here, call
      // them (CBridgedMessage).
      w.line("public import CProtobufC")
      w.line("public import \(module)C")
    }
    if module != runtimeModule {
      // Public when a message or service of the file conforms to or names a runtime type.
      // The SPI is what the bridges and the file's descriptor call (ProtoC, ProtoArena, ...).
      let access = !file.messageType.isEmpty || !file.service.isEmpty ? "public" : "internal"
      w.line("@_spi(GeneratedCode) \(access) import \(runtimeModule)")
    }
    let namespace = namespaces[package] ?? SwiftNames.defaultNamespace(ofPackage: package)
    let scope = package.isEmpty ? "" : "." + package
    for enumType in file.enumType {
      w.line()
      w.line("extension \(namespace) {")
      w.enumeration("\(scope).\(enumType.name ?? "")", indent: "  ")
      w.line("}")
    }
    for message in file.messageType {
      w.line()
      w.line("extension \(namespace) {")
      try w.message("\(scope).\(message.name ?? "")", indent: "  ")
      w.line("}")
    }
    for bridge in w.bridges {
      w.line()
      try w.bridge(bridge)
    }
    for (index, service) in file.service.enumerated() {
      w.line()
      try methods(service, index: index, file: file, namespace: namespace, &w)
    }
    w.line()
    FileDescriptorLiteral.write(file, module: module, &w.out)
  }

  /// A service's `ProtoMethod` descriptors (path and call kind), under an enum named after it.
  private static func methods(
    _ service: GoogleProtobuf.ServiceDescriptorProto, index: Int,
    file: GoogleProtobuf.FileDescriptorProto, namespace: String, _ w: inout MessageWriter
  ) throws(GeneratorError) {
    let name = file.name ?? ""
    let package = file.package ?? ""
    let serviceName = service.name ?? ""
    w.lines(w.model.doc(name, [6, Int32(index)], indent: ""))
    w.line("extension \(namespace) {")
    w.line("  /// The methods of `\(package).\(serviceName)`, for calls through GRPCWire.")
    w.line("  public enum \(serviceName) {")
    for (methodIndex, method) in service.method.enumerated() {
      w.lines(w.model.doc(name, [6, Int32(index), 2, Int32(methodIndex)], indent: "    "))
      let element = "rpc \(serviceName).\(method.name ?? "")"
      let request = try w.model.swiftType(method.inputType, file: name, element: element)
      let response = try w.model.swiftType(method.outputType, file: name, element: element)
      let swiftName = SwiftNames.identifier(SwiftNames.methodName(method.name ?? ""))
      w.line(
        "    public static let \(swiftName) = ProtoMethod<\(request), \(response)>(")
      w.line(
        "      path: \"/\(package).\(serviceName)/\(method.name ?? "")\", kind: .\(CallKind(method).rawValue))")
    }
    w.line("  }")
    w.line("}")
  }

  /// `Namespaces.pb.swift`: a caseless enum per package the module owns (the runtime owns
  /// `google.protobuf` and `google.rpc`), sorted by name; every other module re-exports the
  /// runtime. The namespaces have the module's access level: the types declared `public`
  /// inside them are as visible as they are.
  private static func namespaceFile(
    _ module: String, _ packages: [String], _ namespaces: [String: String], access: String,
    header: GeneratedHeader
  ) -> String {
    var lines = [
      header.doNotEdit(from: "the proto packages"), header.regenerate, "",
    ]
    if module != runtimeModule {
      lines.append("// The messages are used through the runtime (\(runtimeModule).ProtoMessage,")
      lines.append("// serializedBytes(), the well-known types): importing this module is enough.")
      lines.append("@_exported public import \(runtimeModule)")
      lines.append("")
    }
    var owned: [(package: String, namespace: String)] = []
    for package in packages
    where module == runtimeModule || !runtimePackages.contains(package) {
      if owned.contains(where: { $0.package == package }) { continue }
      owned.append(
        (package, namespaces[package] ?? SwiftNames.defaultNamespace(ofPackage: package)))
    }
    for (package, namespace) in owned.sorted(by: { $0.namespace < $1.namespace }) {
      lines.append("/// Messages, enums and services of the proto package `\(package)`.")
      lines.append("\(access) enum \(namespace) {}")
      lines.append("")
    }
    return lines.joined(separator: "\n")
  }

  /// protoc-c's files of `protos`, each marked generated (sources at the top, headers under
  /// include/), an umbrella header and a module map of our own: SwiftPM's umbrella-header
  /// rule does not allow include/ to have the subfolders that protoc-c's #include lines need.
  private static func cTarget(
    _ cModule: String, protos: [String], accessors: [String], cFiles: [String: String],
    header: GeneratedHeader
  ) throws(GeneratorError) -> [(path: String, text: String)] {
    var files: [(path: String, text: String)] = []
    var headers: [String] = []
    for proto in protos {
      let stem = String(proto.dropLast(".proto".count))
      for (suffix, destination) in [
        (".pb-c.c", stem + ".pb-c.c"), (".pb-c.h", "include/" + stem + ".pb-c.h"),
      ] {
        guard let text = cFiles[stem + suffix] else {
          throw GeneratorError(
            file: proto, element: "", reason: "protoc-c wrote no \(stem + suffix)")
        }
        files.append(
          (
            destination,
            header.cRegenerate + "\n" + text
          ))
      }
      headers.append(stem + ".pb-c.h")
    }
    headers.sort()
    let guardName = SwiftNames.snakeUpper(cModule, splittingAfterDigits: false) + "_H"
    var h = [
      header.c("the protobuf-c headers of \(cModule)"),
      "#ifndef \(guardName)", "#define \(guardName)", "",
      "/* Deprecated proto fields are still on the wire and the Swift layer must copy them; the",
      "   deprecation attribute would warn on each copy (the Swift docs carry the note instead). */",
      "#define PROTOBUF_C__NO_DEPRECATED 1", "",
    ]
    h += headers.map { "#include \"\($0)\"" }
    h += [
      "",
      "/* Swift cannot take the address of a C `extern const`; these return protoc-c's descriptors. */",
    ]
    for lower in accessors.sorted() {
      h.append(
        "static inline const ProtobufCMessageDescriptor *\(accessorPrefix)\(lower)(void) {")
      h.append("  return &\(lower)__descriptor;")
      h.append("}")
    }
    h += ["", "#endif", ""]
    files.append(("include/\(cModule).h", h.joined(separator: "\n")))
    // Every header is named, so that another module's #include of one of them is an import
    // of this module, not a second copy of its types.
    var m = [
      header.doNotEdit(from: nil), "module \(cModule) {",
      "  header \"\(cModule).h\"",
    ]
    m += headers.map { "  header \"\($0)\"" }
    m += ["  export *", "}", ""]
    files.append(("include/module.modulemap", m.joined(separator: "\n")))
    return files
  }
}
