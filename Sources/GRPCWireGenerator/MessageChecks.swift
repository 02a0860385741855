import ProtoDescriptors

/// Names and constructs the message layer cannot write as compiling Swift, found from the
/// descriptor set alone: run before protoc-c, which crashes (SIGSEGV, protobuf-c 1.4) on a
/// `group`. Each error names the file, the element and why, and what to do instead.
enum MessageChecks {
  /// Names the generated bridge (`init(cMessage:)`, `matches(cMessage:)`, `fill`) and the
  /// copy-on-write storage use unqualified beside the fields: a field of one of these names
  /// would be shadowed by them, or (`self`) is not a property Swift can name unqualified.
  static let bridgeNames: Set<String> = [
    "self", "c", "m", "p", "e", "entry", "arena", "storage", "uniqueStorage", "hashValue",
  ]

  static func check(
    _ set: GoogleProtobuf.FileDescriptorSet, protos: Set<String>, namespaces: [String: String]
  ) throws(GeneratorError) {
    // Every namespace of the set: a type named like one hides it from the types around it.
    var namespaceOf: [String: String] = [:]
    for file in set.file {
      let package = file.package ?? ""
      namespaceOf[namespaces[package] ?? SwiftNames.defaultNamespace(ofPackage: package)] =
        package
    }
    for file in set.file where protos.contains(file.name ?? "") {
      let name = file.name ?? ""
      let package = file.package ?? ""
      if package.isEmpty && !(file.messageType.isEmpty && file.enumType.isEmpty) {
        throw GeneratorError(
          file: name, element: "",
          reason: "the file declares no package, so its types have no namespace to live in; "
            + "give it a `package`")
      }
      func typeName(_ element: String, _ protoName: String, suffix: String) throws(GeneratorError) {
        let swiftName = SwiftNames.typeMembers.contains(protoName) ? protoName + suffix : protoName
        if let other = namespaceOf[swiftName] {
          throw GeneratorError(
            file: name, element: element,
            reason: "its Swift name `\(swiftName)` is the namespace of package "
              + "\(other.isEmpty ? "(none)" : other), which it would hide from the types "
              + "beside it; rename it, or give that package another namespace with "
              + "--namespace \(other)=Name")
        }
      }
      func message(_ m: GoogleProtobuf.DescriptorProto, scope: String) throws(GeneratorError) {
        let full = scope.isEmpty ? (m.name ?? "") : "\(scope).\(m.name ?? "")"
        let element = "message \(full)"
        try typeName(element, m.name ?? "", suffix: "Message")
        var members: [String: String] = [:]  // Swift member name -> what declares it
        var nestedTypes: Set<String> = []
        for nested in m.nestedType where nested.options?.mapEntry != true {
          let n = nested.name ?? ""
          nestedTypes.insert(SwiftNames.typeMembers.contains(n) ? n + "Message" : n)
        }
        for nested in m.enumType {
          let n = nested.name ?? ""
          nestedTypes.insert(SwiftNames.typeMembers.contains(n) ? n + "Enum" : n)
        }
        for field in m.field {
          let fieldElement = "field \(full).\(field.name ?? "")"
          if field.type == .group {
            throw GeneratorError(
              file: name, element: fieldElement,
              reason: "groups are not supported (protoc-c 1.4 crashes on them); declare a "
                + "nested message and a field of it instead")
          }
          let swiftName = SwiftNames.camel(field.name ?? "", upperFirst: false)
          if MessageField.reservedMembers.contains(swiftName) {
            throw GeneratorError(
              file: name, element: fieldElement,
              reason: "its Swift name `\(swiftName)` is a member every generated message has; "
                + "rename the field")
          }
          if bridgeNames.contains(swiftName) {
            throw GeneratorError(
              file: name, element: fieldElement,
              reason: "its Swift name `\(swiftName)` is a name the generated code uses beside "
                + "the fields (\(bridgeNames.sorted().joined(separator: ", "))); rename the field")
          }
          if let other = members[swiftName] {
            throw GeneratorError(
              file: name, element: fieldElement,
              reason: "its Swift name `\(swiftName)` is also \(other)'s")
          }
          members[swiftName] = "field \(field.name ?? "")"
        }
        for (index, oneof) in m.oneofDecl.enumerated() {
          let oneofName = oneof.name ?? ""
          let fields = m.field.filter { $0.oneofIndex == Int32(index) }
          // A one-field oneof `_<field>` is a proto3 `optional`: a plain optional in Swift.
          if fields.count == 1 && oneofName == "_" + (fields[0].name ?? "") { continue }
          let element = "oneof \(full).\(oneofName)"
          let property = SwiftNames.camel(oneofName, upperFirst: false)
          let type = SwiftNames.camel(oneofName, upperFirst: true)
          if let other = members[property] {
            throw GeneratorError(
              file: name, element: element,
              reason: "its Swift name `\(property)` is also \(other)'s")
          }
          if bridgeNames.contains(property) || MessageField.reservedMembers.contains(property) {
            throw GeneratorError(
              file: name, element: element,
              reason: "its Swift name `\(property)` is a name the generated code uses; rename "
                + "the oneof")
          }
          if nestedTypes.contains(type) || SwiftNames.typeMembers.contains(type) {
            throw GeneratorError(
              file: name, element: element,
              reason: "its Swift type `\(full).\(type)` is also a nested type's name (or "
                + "Swift's own); rename the oneof")
          }
          members[property] = "oneof \(oneofName)"
          nestedTypes.insert(type)
        }
        for nested in m.nestedType { try message(nested, scope: full) }
        for nested in m.enumType {
          try typeName("enum \(full).\(nested.name ?? "")", nested.name ?? "", suffix: "Enum")
        }
      }
      for m in file.messageType { try message(m, scope: package) }
      for e in file.enumType {
        let full = package.isEmpty ? (e.name ?? "") : "\(package).\(e.name ?? "")"
        try typeName("enum \(full)", e.name ?? "", suffix: "Enum")
      }
    }
  }
}
