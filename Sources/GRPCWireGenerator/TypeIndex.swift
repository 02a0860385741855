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
}
