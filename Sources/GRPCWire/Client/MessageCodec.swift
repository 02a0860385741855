public import ProtoRuntime

/// One response message as it arrived, after decompression.
public struct ReceivedMessage: Sendable {
  /// The serialized message.
  public var bytes: [UInt8]
  /// Whether the server sent it compressed (the prefix's flag was 1).
  public var wasCompressed: Bool

  public init(bytes: [UInt8], wasCompressed: Bool) {
    self.bytes = bytes
    self.wasCompressed = wasCompressed
  }
}

/// Turns request messages into bytes. Errors it throws fail the call with INTERNAL.
public protocol MessageSerializer<Message>: Sendable {
  associatedtype Message
  /// Appends the serialized `message` to `buffer`.
  func serialize(_ message: Message, into buffer: inout [UInt8]) throws
}

/// Turns received bytes into response messages. Errors it throws fail the call with INTERNAL
/// and reset its stream.
public protocol MessageDeserializer<Message>: Sendable {
  associatedtype Message
  func deserialize(_ message: ReceivedMessage) throws -> Message
}

/// This package's protobuf messages (``ProtoMessage``), encoded through protobuf-c.
public struct ProtoSerializer<Message: ProtoMessage>: MessageSerializer {
  public init() {}
  public func serialize(_ message: Message, into buffer: inout [UInt8]) {
    message.encode(appendingTo: &buffer)
  }
}

/// This package's protobuf messages (``ProtoMessage``), decoded through protobuf-c.
public struct ProtoDeserializer<Message: ProtoMessage>: MessageDeserializer {
  public init() {}
  public func deserialize(_ message: ReceivedMessage) throws -> Message {
    try Message(serializedBytes: message.bytes)
  }
}

/// Messages as raw bytes, unchanged.
public struct RawBytesSerializer: MessageSerializer {
  public init() {}
  public func serialize(_ message: [UInt8], into buffer: inout [UInt8]) {
    buffer.append(contentsOf: message)
  }
}

/// Messages as raw bytes, unchanged.
public struct RawBytesDeserializer: MessageDeserializer {
  public init() {}
  public func deserialize(_ message: ReceivedMessage) -> [UInt8] { message.bytes }
}
