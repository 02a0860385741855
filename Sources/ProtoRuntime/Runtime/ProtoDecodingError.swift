/// Bytes that could not be decoded as the message they were meant to be.
///
/// protobuf-c reports a failed unpack without saying where, so `reason` says what kind of
/// failure it was and `message` which message type was being decoded.
public struct ProtoDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What went wrong.
  public enum Reason: Hashable, Sendable {
    /// Truncated input, a wrong wire type, an over-long length, a bad varint or tag: protobuf-c
    /// rejected the bytes.
    case malformed
    /// A `string` field held bytes that are not valid UTF-8.
    case invalidUTF8
  }

  /// The full name of the message being decoded, e.g. `maps.fleetengine.v1.Trip`.
  public var message: String
  public var reason: Reason
  /// How many bytes were offered.
  public var byteCount: Int

  public init(message: String, reason: Reason, byteCount: Int) {
    self.message = message
    self.reason = reason
    self.byteCount = byteCount
  }

  public var description: String {
    switch reason {
    case .malformed:
      "\(byteCount) bytes are not a valid \(message): truncated, wrong wire type or bad length"
    case .invalidUTF8: "\(byteCount) bytes of \(message) hold a string field that is not UTF-8"
    }
  }
}
