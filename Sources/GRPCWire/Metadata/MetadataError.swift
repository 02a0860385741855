/// Metadata that cannot be sent, found by ``Metadata/validate()`` before a call starts.
///
/// Names the key and what is wrong with it, never the value: values are often credentials.
/// The call layer fails such a call before sending anything, with the error
/// ``RPCError/invalidMetadata(_:)`` makes (INTERNAL, with this as its cause).
public struct MetadataError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong with the key or its value.
  public enum Reason: Sendable, Hashable {
    /// The key is empty.
    case emptyKey
    /// The key holds a character gRPC does not allow; keys are `0-9 a-z _ - .` (uppercase is
    /// lowercased when added).
    case invalidKeyCharacter(Unicode.Scalar)
    /// The key is a pseudo-header, starts with `grpc-`, or is a name the transport owns (see
    /// ``Metadata/reservedHeaderNames``).
    case reservedKey
    /// A binary value was added under a key that does not end in `-bin`.
    case binaryValueForASCIIKey
    /// A string value holds a byte outside printable ASCII (space to `~`), such as a control
    /// character, a line break or non-ASCII text; `offset` is its UTF-8 byte offset.
    case invalidValueByte(UInt8, offset: Int)
  }

  /// The offending key, as stored (lowercased).
  public var key: String
  /// What is wrong with it.
  public var reason: Reason

  /// An error about `key` (as stored, lowercased).
  public init(key: String, reason: Reason) {
    self.key = key
    self.reason = reason
  }

  /// One sentence naming the key and the problem, e.g. `metadata key "x y" contains " "; …`.
  public var description: String {
    let key = String(reflecting: key)
    return switch reason {
    case .emptyKey:
      "metadata key is empty"
    case .invalidKeyCharacter(let scalar):
      "metadata key \(key) contains \(String(reflecting: Character(scalar))); keys may only use "
        + "0-9, a-z, '_', '-' and '.'"
    case .reservedKey:
      "metadata key \(key) is reserved for gRPC or HTTP/2 and cannot be set as metadata"
    case .binaryValueForASCIIKey:
      "metadata key \(key) has a binary value but does not end in \"-bin\""
    case .invalidValueByte(let byte, let offset):
      "the value of metadata key \(key) has byte 0x\(String(byte, radix: 16, uppercase: true)) "
        + "at offset \(offset); ASCII values may only hold printable ASCII (space to '~'); "
        + "send other data under a key ending in \"-bin\""
    }
  }
}
