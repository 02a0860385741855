internal import FoundationEssentials

/// One `.proto` file the package's messages were generated from, as protoc compiled it: its
/// name, the files it imports, what it declares, and its serialized
/// `google.protobuf.FileDescriptorProto`.
///
/// What a gRPC reflection service hands to clients such as grpcurl, so that they can build
/// requests to a server they have no `.proto` files of. CodeGen generates one value per file,
/// from the descriptor set `protoc --include_imports` writes, and a list per module:
/// ``protoRuntime`` here, `fleetProtos`, `grpcTestingProtos` and `grpcServiceProtos` in the
/// message modules.
public struct ProtoFileDescriptor: Sendable {
  /// The file's name as protoc saw it, e.g. `google/maps/fleetengine/v1/trips.proto`.
  public let name: String
  /// The names of the files it imports, in the order of its `import` lines.
  public let dependencies: [String]
  /// The extension fields it declares.
  public let extensions: [Extension]
  private let symbolLines: String
  private let base64: String

  /// An extension field: the message it extends (fully qualified, no leading dot) and its
  /// field number.
  public struct Extension: Sendable, Hashable {
    public let extendee: String
    public let number: Int32

    /// What CodeGen writes for each extension a file declares.
    @_spi(GeneratedCode) public init(extendee: String, number: Int32) {
      self.extendee = extendee
      self.number = number
    }
  }

  /// What CodeGen writes for each file, in every message module.
  @_spi(GeneratedCode) public init(
    name: String, dependencies: [String], extensions: [Extension], symbols: String,
    base64: String
  ) {
    self.name = name
    self.dependencies = dependencies
    self.extensions = extensions
    self.symbolLines = symbols
    self.base64 = base64
  }

  /// The fully qualified names (no leading dot) of everything the file declares: messages and
  /// enums (nested ones too), fields, oneofs, enum values (beside their enum, as protobuf scopes
  /// them), services, methods and extensions. Split from one string at each access.
  public var symbols: [String] {
    // One string literal per file, not an array literal: the compiler type-checks an array
    // literal element by element.
    symbolLines.split(separator: "\n").map(String.init)
  }

  /// The serialized `FileDescriptorProto`, without source code info. Decoded from the base64
  /// text it is compiled in as at each access, so keep the result: a string literal compiles
  /// in an instant where a byte array literal of the same size takes minutes.
  public var serializedBytes: [UInt8] {
    guard let bytes = Data(base64Encoded: base64) else {
      preconditionFailure("CodeGen wrote a descriptor of \(name) that is not base64")
    }
    return [UInt8](bytes)
  }
}
