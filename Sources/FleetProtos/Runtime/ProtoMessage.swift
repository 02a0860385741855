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
    // withUnsafeBytes cannot forward a typed throw, so the message travels out in an optional
    // and is moved, not copied, into self: Result.get() copied it, a retain and a release for
    // every reference a big message (a Trip) holds.
    var decoded: Self? = nil
    var failure: ProtoDecodingError? = nil
    bytes.withUnsafeBytes { raw in
      do throws(ProtoDecodingError) { decoded = try Self(serializedBytes: raw) } catch {
        failure = error
      }
    }
    if let failure { throw failure }
    self = decoded.take()!
  }

  /// The message's wire encoding.
  public func serializedBytes() -> [UInt8] {
    var buffer: [UInt8] = []
    encode(appendingTo: &buffer)
    return buffer
  }
}
