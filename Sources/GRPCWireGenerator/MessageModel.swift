import ProtoDescriptors

/// Every message and enum of a descriptor set, by full name with a leading dot, with the Swift
/// name the message layer gives it and the comments of its file.
struct MessageModel {
  struct MessageEntry {
    var file: String
    var message: GoogleProtobuf.DescriptorProto
    /// The location path of `message` in its file (`[4, 0, 3, 1]`), for its comments.
    var path: [Int32]
  }

  struct EnumEntry {
    var file: String
    var enumType: GoogleProtobuf.EnumDescriptorProto
    var path: [Int32]
  }

  var messages: [String: MessageEntry] = [:]
  var enums: [String: EnumEntry] = [:]
  var swift: [String: String] = [:]
  /// By full name: the proto package the message or enum is declared in.
  var packages: [String: String] = [:]
  /// By file name, then location path: the leading comment (empty when it has none; a later
  /// location of the same path replaces an earlier one).
  var comments: [String: [[Int32]: String]] = [:]
  /// By file name: its `syntax`, empty for a proto2 file that does not say (as protoc writes).
  var syntaxes: [String: String] = [:]

  init(_ set: GoogleProtobuf.FileDescriptorSet, namespaces: [String: String]) {
    for file in set.file {
      let name = file.name ?? ""
      let package = file.package ?? ""
      let namespace = namespaces[package] ?? SwiftNames.defaultNamespace(ofPackage: package)
      var byPath: [[Int32]: String] = [:]
      for location in file.sourceCodeInfo?.location ?? [] {
        byPath[location.path] = location.leadingComments ?? ""
      }
      comments[name] = byPath
      syntaxes[name] = file.syntax ?? ""
      // Full names as protoc writes type names: `.pkg.Outer.Inner`, `.Outer` with no package.
      let parent = package.isEmpty ? "" : "." + package
      let before = Set(swift.keys)
      for (index, message) in file.messageType.enumerated() {
        addMessage(
          message, file: name, parent: parent, parentSwift: namespace, path: [4, Int32(index)])
      }
      for (index, enumType) in file.enumType.enumerated() {
        addEnum(
          enumType, file: name, parent: parent, parentSwift: namespace, path: [5, Int32(index)])
      }
      for full in swift.keys where !before.contains(full) { packages[full] = package }
    }
  }

  private func swiftName(full: String, parentSwift: String, name: String, suffix: String)
    -> String
  {
    let name = SwiftNames.typeMembers.contains(name) ? name + suffix : name
    return "\(parentSwift).\(SwiftNames.typeRenames[String(full.dropFirst())] ?? name)"
  }

  private mutating func addMessage(
    _ message: GoogleProtobuf.DescriptorProto, file: String, parent: String,
    parentSwift: String, path: [Int32]
  ) {
    let full = "\(parent).\(message.name ?? "")"
    messages[full] = MessageEntry(file: file, message: message, path: path)
    let swiftFull = swiftName(
      full: full, parentSwift: parentSwift, name: message.name ?? "", suffix: "Message")
    swift[full] = swiftFull
    for (index, nested) in message.nestedType.enumerated() {
      addMessage(
        nested, file: file, parent: full, parentSwift: swiftFull, path: path + [3, Int32(index)])
    }
    for (index, enumType) in message.enumType.enumerated() {
      addEnum(
        enumType, file: file, parent: full, parentSwift: swiftFull, path: path + [4, Int32(index)])
    }
  }

  private mutating func addEnum(
    _ enumType: GoogleProtobuf.EnumDescriptorProto, file: String, parent: String,
    parentSwift: String, path: [Int32]
  ) {
    let full = "\(parent).\(enumType.name ?? "")"
    enums[full] = EnumEntry(file: file, enumType: enumType, path: path)
    swift[full] = swiftName(
      full: full, parentSwift: parentSwift, name: enumType.name ?? "", suffix: "Enum")
  }

  /// The leading comment at `path` of `file` as `///` lines, each after `indent`.
  func doc(_ file: String, _ path: [Int32], indent: String) -> [String] {
    ServiceStubs.Comments.docLines(comments[file]?[path] ?? "").map { indent + $0 }
  }

  func isMapEntry(_ typeName: String?) -> Bool {
    guard let typeName, let entry = messages[typeName] else { return false }
    return entry.message.options?.mapEntry ?? false
  }

  /// The Swift name of the message or enum `typeName` (`.pkg.Outer.Inner`).
  func swiftType(_ typeName: String?, file: String, element: @autoclosure () -> String)
    throws(GeneratorError) -> String
  {
    guard let typeName, let swift = swift[typeName] else {
      throw GeneratorError(
        file: file, element: element(),
        reason: "its type \(typeName ?? "(none)") is not in the descriptor set")
    }
    return swift
  }
}
