import ProtoDescriptors

/// A .proto file as protoc compiled it, written as a `ProtoFileDescriptor` for gRPC server
/// reflection: its serialized `FileDescriptorProto` (source code info left out: reflection
/// clients do not need it and it would triple the size), its imports, the extensions and the
/// fully qualified names it declares.
enum FileDescriptorLiteral {
  /// Characters of base64 per line of a descriptor's literal (a line then fits in 100 columns).
  static let base64Line = 88

  /// `grpc/testing/test.proto` → `grpcTestingTest`: the static property holding it.
  static func propertyName(of proto: String) -> String {
    let stem = proto.hasSuffix(".proto") ? String(proto.dropLast(".proto".count)) : proto
    let snake = String(stem.map { $0 == "/" || $0 == "-" || $0 == "." ? "_" : $0 })
    return SwiftNames.camel(snake, upperFirst: false)
  }

  /// `FleetProtos` → `fleetProtos`, `GRPCTestingProtos` → `grpcTestingProtos`: the list of a
  /// module's descriptors (a leading acronym is lower-cased whole).
  static func listName(of module: String) -> String {
    let characters = Array(module)
    func isUpper(_ at: Int) -> Bool {
      at < characters.count && characters[at].isASCII && characters[at].isUppercase
    }
    func isLower(_ at: Int) -> Bool {
      at < characters.count && characters[at].isASCII && characters[at].isLowercase
    }
    guard isUpper(0) else { return module }
    var run = 0
    while isUpper(run) { run += 1 }
    var head = 1
    for length in stride(from: run, through: 1, by: -1)
    where length == characters.count || (isUpper(length) && isLower(length + 1)) {
      head = length
      break
    }
    return String(characters[..<head]).lowercased() + String(characters[head...])
  }

  /// The literal of `file`, in module `module`.
  static func write(
    _ file: GoogleProtobuf.FileDescriptorProto, module: String, _ out: inout TextLines
  ) {
    var stripped = file
    stripped.sourceCodeInfo = nil
    let encoded = base64(stripped.serializedBytes())
    var chunks: [Substring] = []
    var start = encoded.startIndex
    while start < encoded.endIndex {
      let end =
        encoded.index(start, offsetBy: base64Line, limitedBy: encoded.endIndex) ?? encoded.endIndex
      chunks.append(encoded[start..<end])
      start = end
    }
    if chunks.isEmpty { chunks = [""] }
    let name = file.name ?? ""
    out.line("extension ProtoFileDescriptor {")
    out.line(
      "  /// `\(name)`, as protoc compiled it; one of ``ProtoFileDescriptor/\(listName(of: module))``."
    )
    out.line("  static let \(propertyName(of: name)) = ProtoFileDescriptor(")
    out.line("    name: \"\(name)\",")
    out.line("    dependencies: [\(file.dependency.map { "\"\($0)\"" }.joined(separator: ", "))],")
    let extensions = declaredExtensions(file).map {
      ".init(extendee: \"\($0.0)\", number: \($0.1))"
    }
    out.line("    extensions: [\(extensions.joined(separator: ", "))],")
    out.line("    symbols: \"\"\"")
    for symbol in declaredSymbols(file) { out.line("      \(symbol)") }
    out.line("      \"\"\",")
    out.line("    base64: \"\"\"")
    for (index, chunk) in chunks.enumerated() {
      out.line("      \(chunk)" + (index < chunks.count - 1 ? "\\" : ""))
    }
    out.line("      \"\"\")")
    out.line("}")
  }

  /// The index of a module's descriptors, each after the files it imports.
  static func index(
    module: String, names: [String], access: String, header: GeneratedHeader
  ) -> String {
    var out = TextLines()
    out.line(contentsOf: header.swift(from: "every .proto file of \(module)"))
    out.line()
    out.line("extension ProtoFileDescriptor {")
    out.line(
      "  /// Every .proto file \(module) was generated from, each after the files it imports.")
    out.line("  \(access) static let \(listName(of: module)): [ProtoFileDescriptor] = [")
    for name in names { out.line("    .\(name),") }
    out.line("  ]")
    out.line("}")
    return out.text
  }

  /// Every fully qualified name (no leading dot) `file` declares, as a descriptor pool
  /// resolves them: messages and enums (nested ones too), fields, oneofs, enum values (beside
  /// their enum, in the scope that holds it, as protobuf scopes them), services, methods and
  /// extensions.
  static func declaredSymbols(_ file: GoogleProtobuf.FileDescriptorProto) -> [String] {
    var names: [String] = []
    func scope(_ parent: String, _ name: String?) -> String {
      parent.isEmpty ? (name ?? "") : "\(parent).\(name ?? "")"
    }
    func enumeration(_ parent: String, _ e: GoogleProtobuf.EnumDescriptorProto) {
      names.append(scope(parent, e.name))
      names += e.value.map { scope(parent, $0.name) }
    }
    func message(_ parent: String, _ m: GoogleProtobuf.DescriptorProto) {
      let full = scope(parent, m.name)
      names.append(full)
      names += m.field.map { scope(full, $0.name) }
      names += m.oneofDecl.map { scope(full, $0.name) }
      names += m.extension.map { scope(full, $0.name) }
      for nested in m.nestedType { message(full, nested) }
      for e in m.enumType { enumeration(full, e) }
    }
    let package = file.package ?? ""
    for m in file.messageType { message(package, m) }
    for e in file.enumType { enumeration(package, e) }
    names += file.extension.map { scope(package, $0.name) }
    for service in file.service {
      let full = scope(package, service.name)
      names.append(full)
      names += service.method.map { scope(full, $0.name) }
    }
    return names
  }

  /// (extended message, field number) of every extension `file` declares, nested ones too.
  static func declaredExtensions(_ file: GoogleProtobuf.FileDescriptorProto) -> [(String, Int32)] {
    func entry(_ x: GoogleProtobuf.FieldDescriptorProto) -> (String, Int32) {
      (String((x.extendee ?? "").drop { $0 == "." }), x.number ?? 0)
    }
    var found = file.extension.map(entry)
    func message(_ m: GoogleProtobuf.DescriptorProto) {
      found += m.extension.map(entry)
      for nested in m.nestedType { message(nested) }
    }
    for m in file.messageType { message(m) }
    return found
  }

  /// Standard base64 with padding.
  static func base64(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count + 2) / 3 * 4)
    var i = 0
    while i < bytes.count {
      let b0 = UInt32(bytes[i])
      let b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0
      let b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
      let triple = b0 << 16 | b1 << 8 | b2
      out.append(alphabet[Int(triple >> 18 & 63)])
      out.append(alphabet[Int(triple >> 12 & 63)])
      out.append(i + 1 < bytes.count ? alphabet[Int(triple >> 6 & 63)] : UInt8(ascii: "="))
      out.append(i + 2 < bytes.count ? alphabet[Int(triple & 63)] : UInt8(ascii: "="))
      i += 3
    }
    return String(decoding: out, as: UTF8.self)
  }
}
