public import ProtoDescriptors

/// Every message of a descriptor set by its fully qualified proto name (with the leading dot,
/// as a field's or method's type names it), with the Swift name the message layer gives it.
public struct TypeIndex: Sendable {
  /// `.acme.dispatch.v1.Order.Line` → `Dispatch.Order.Line`.
  public private(set) var swiftNames: [String: String] = [:]
  /// `.acme.dispatch.v1.Order.Line` → the proto package it is declared in.
  public private(set) var packages: [String: String] = [:]

  /// Indexes `set`, naming each package's namespace by `namespaces` or, for a package it does
  /// not list, by ``SwiftNames/defaultNamespace(ofPackage:)``.
  public init(_ set: GoogleProtobuf.FileDescriptorSet, namespaces: [String: String]) {
    for file in set.file {
      let package = file.package ?? ""
      let namespace = namespaces[package] ?? SwiftNames.defaultNamespace(ofPackage: package)
      for message in file.messageType {
        add(message, protoScope: package, swiftScope: namespace, package: package)
      }
    }
  }

  private mutating func add(
    _ message: GoogleProtobuf.DescriptorProto, protoScope: String, swiftScope: String,
    package: String
  ) {
    let name = message.name ?? ""
    let full = protoScope.isEmpty ? name : "\(protoScope).\(name)"
    let swiftName =
      SwiftNames.typeRenames[full]
      ?? (SwiftNames.typeMembers.contains(name) ? name + "Message" : name)
    let swiftFull = "\(swiftScope).\(swiftName)"
    swiftNames["." + full] = swiftFull
    packages["." + full] = package
    for nested in message.nestedType {
      add(nested, protoScope: full, swiftScope: swiftFull, package: package)
    }
  }
}
