/// A protobuf message as a Swift value, encoded and decoded by protobuf-c.
///
/// Every generated message conforms. Values are plain structs: copy them freely and send them
/// across tasks. Encoding never fails; decoding throws ``ProtoDecodingError`` for bytes that
/// are not a valid encoding of the message.
public protocol ProtoMessage: Hashable, Sendable {
  /// The message's full name in its .proto package, e.g. `maps.fleetengine.v1.Trip`.
  static var protoMessageName: String { get }

  /// A message with every field at its default.
  init()

  /// Decodes the protobuf wire encoding in `bytes`.
  ///
  /// Unknown fields are kept in `unknownFields`. Throws for truncated or malformed input,
  /// wrong wire types and strings that are not UTF-8; never crashes on any input.
  init(serializedBytes bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError)

  /// Appends the message's wire encoding to `buffer` (room for a gRPC length prefix is the
  /// caller's business: write it first, then call this).
  func encode(appendingTo buffer: inout [UInt8])

  /// Fields the schema does not know, kept as they arrived.
  var unknownFields: ProtoUnknownFields { get set }
}

extension ProtoMessage {
  /// Decodes the protobuf wire encoding in `bytes`; see ``init(serializedBytes:)-(UnsafeRawBufferPointer)``.
  public init(serializedBytes bytes: [UInt8]) throws(ProtoDecodingError) {
    // The message is returned straight into self: no Optional<Self> or Result<Self, _> in
    // between, whose generic metadata was looked up on every decode and whose value was
    // copied out (a retain and a release for every reference a Trip holds).
    // withUnsafeBytes rethrows untyped; only ProtoDecodingError can come out of the body.
    do {
      self = try bytes.withUnsafeBytes { raw in try Self(serializedBytes: raw) }
    } catch let error as ProtoDecodingError {
      throw error
    } catch {
      preconditionFailure("Self(serializedBytes:) threw \(error), not a ProtoDecodingError")
    }
  }

  /// The message's wire encoding.
  public func serializedBytes() -> [UInt8] {
    var buffer: [UInt8] = []
    encode(appendingTo: &buffer)
    return buffer
  }
}
