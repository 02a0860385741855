public import ProtoRuntime

/// One response message lent to its reader: its bytes where they arrived (the connection's
/// read buffer), not copied out (``UnaryCallReceiver/ended(lending:)``).
///
/// Valid only during the call that lends it: decode it there, or keep a copy
/// (``copied()``). Not `Sendable`: it points into memory the connection reuses.
public struct LentMessage {
  /// The serialized message.
  public let bytes: UnsafeRawBufferPointer
  /// Whether the server sent it compressed (then `bytes` are the decompressed message).
  public let wasCompressed: Bool

  public init(bytes: UnsafeRawBufferPointer, wasCompressed: Bool) {
    self.bytes = bytes
    self.wasCompressed = wasCompressed
  }

  /// The message, copied: a ``ReceivedMessage`` to keep.
  public func copied() -> ReceivedMessage {
    ReceivedMessage(bytes: Array(bytes), wasCompressed: wasCompressed)
  }

  /// The message decoded as `Message`; a message that does not decode is the INTERNAL error
  /// a call reports for it, as ``ReceivedMessage/decoded(by:)`` says.
  @inlinable
  public func decoded<Message: ProtoMessage>(as type: Message.Type) -> Result<Message, RPCError> {
    do {
      return .success(try Message(serializedBytes: bytes))
    } catch {
      return .failure(ReceivedMessage.undecodable(error))
    }
  }
}
