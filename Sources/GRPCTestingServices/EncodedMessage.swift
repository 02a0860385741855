public import ProtoRuntime

/// A message already in its protobuf wire encoding, written as it is.
///
/// For handlers that send the same response many times (BenchmarkService's streams): the
/// message is encoded once, and each write only copies its bytes behind the gRPC prefix.
/// Decoding keeps the bytes as they arrived, unparsed.
public struct EncodedMessage: ProtoMessage {
  public static var protoMessageName: String { "grpc.testing.EncodedMessage" }

  /// The wire encoding of some message.
  public var bytes: [UInt8]
  public var unknownFields = ProtoUnknownFields()

  public init() { bytes = [] }

  /// The encoding of `message`.
  public init(_ message: some ProtoMessage) {
    bytes = []
    message.encode(appendingTo: &bytes)
  }

  public init(serializedBytes bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError) {
    self.bytes = Array(bytes)
  }

  public func encode(appendingTo buffer: inout [UInt8]) {
    buffer.append(contentsOf: bytes)
  }
}
