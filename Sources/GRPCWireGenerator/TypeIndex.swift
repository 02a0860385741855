public import ProtoDescriptors

/// Every message of a descriptor set by its fully qualified proto name (with the leading dot,
/// as a field's or method's type names it), with the Swift name the message layer gives it.
public struct TypeIndex: Sendable {
  /// `.acme.dispatch.v1.Order.Line` → `Dispatch.Order.Line`.
  public private(set) var swiftNames: [String: String] = [:]
  /// `.acme.dispatch.v1.Order.Line` → the proto package it is declared in.
  public private(set) var packages: [String: String] = [:]

  /// Indexes `set`, naming each package's namespace by `namespaces` or, for a package it does
  /// not list, by ``SwiftNames/defaultNamespace(ofPackage:)``: the names the message layer
  /// gives (one rule, `MessageModel`'s).
  public init(_ set: GoogleProtobuf.FileDescriptorSet, namespaces: [String: String]) {
    let model = MessageModel(set, namespaces: namespaces)
    for full in model.messages.keys {
      swiftNames[full] = model.swift[full]
      packages[full] = model.packages[full]
    }
  }

  /// Indexes `set` with the names `protoc-gen-swift` gives its messages
  /// (`.acme.dispatch.v1.Order.Line` → `Acme_Dispatch_V1_Order.Line`; ``SwiftProtobufNames``).
  public init(swiftProtobuf set: GoogleProtobuf.FileDescriptorSet) {
    for file in set.file {
      let package = file.package ?? ""
      let prefix = SwiftProtobufNames.typePrefix(
        package: package, swiftPrefix: file.options?.swiftPrefix)
      func add(_ message: GoogleProtobuf.DescriptorProto, parent: String, parentSwift: String?) {
        let name = message.name ?? ""
        let full = "\(parent).\(name)"
        let swift =
          parentSwift.map { "\($0).\(SwiftProtobufNames.messageName(name))" }
          ?? SwiftProtobufNames.messageName(prefix + name)
        swiftNames[full] = swift
        packages[full] = package
        for nested in message.nestedType { add(nested, parent: full, parentSwift: swift) }
      }
      for message in file.messageType {
        add(message, parent: package.isEmpty ? "" : "." + package, parentSwift: nil)
      }
    }
  }
}
