/// The responses of a server-streaming or bidirectional call, in order.
///
/// Iterate it once. Iteration ends when the server ends the call with OK and throws
/// ``RPCError`` otherwise. Reading is what opens the flow-control window: a server cannot get
/// more than one stream window ahead of the reader.
public struct ResponseStream<Message: Sendable>: AsyncSequence, Sendable {
  public typealias Element = Message
  public typealias Failure = any Error

  let stream: ClientStream
  let decode: @Sendable (ClientStream.Received) throws -> Message

  init(stream: ClientStream, deserializer: some MessageDeserializer<Message>) {
    self.stream = stream
    self.decode = { received in try ResponseDecoding.decode(received, stream, deserializer) }
  }

  /// The response headers' metadata, waiting for them if needed. Empty for a trailers-only
  /// response; throws the call's error when it failed before any headers.
  public func initialMetadata() async throws -> Metadata {
    try await stream.initialMetadata()
  }

  /// The trailers' metadata once the call is over (also for a failed call), else nil.
  public var trailingMetadata: Metadata? {
    switch stream.outcome {
    case .success(let metadata): metadata
    case .failure(let error): error.metadata
    case nil: nil
    }
  }

  /// Payload bytes of responses that have arrived but not been read yet (what a slow reader
  /// costs in memory; flow control bounds it by the stream window).
  public var bufferedByteCount: Int { stream.bufferedResponseBytes }

  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(stream: stream, decode: decode)
  }

  public struct AsyncIterator: AsyncIteratorProtocol {
    let stream: ClientStream
    let decode: @Sendable (ClientStream.Received) throws -> Message

    public mutating func next() async throws -> Message? {
      guard let received = try await stream.nextMessage() else { return nil }
      return try decode(received)
    }
  }
}

/// Writes the requests of a client-streaming or bidirectional call.
public struct RequestWriter<Message>: Sendable {
  let stream: ClientStream
  let serialize: @Sendable (Message, inout [UInt8]) throws -> Void
  let compression: CallOptions.Compression?

  init(
    stream: ClientStream, serializer: some MessageSerializer<Message>,
    compression: CallOptions.Compression?
  ) {
    self.stream = stream
    self.serialize = { message, buffer in try serializer.serialize(message, into: &buffer) }
    self.compression = compression
  }

  /// Sends one message; suspends while the server's flow-control window is closed and more
  /// than 1 MiB is already waiting. `compress: false` sends this message uncompressed even when
  /// the call compresses (a compressed message needs the call's `compression` set).
  /// Throws the call's error once it is over.
  public func write(_ message: Message, compress: Bool = true) async throws {
    var bytes: [UInt8] = []
    do {
      try MessageFramer.append(to: &bytes, compress: compress && compression != nil) {
        try serialize(message, &$0)
      }
    } catch {
      throw RPCError(code: .internalError, message: "could not serialize a request: \(error)", cause: error)
    }
    try await stream.write(bytes, finish: false)
  }

  /// Ends the request stream (half-close); the server sees the end of its input.
  public func finish() {
    stream.finishRequests()
  }
}

/// Received frames to messages: decompression, the size limit, then the deserializer. A
/// failure resets the call and is thrown as an RPCError.
enum ResponseDecoding {
  static func decode<Message>(
    _ received: ClientStream.Received, _ stream: ClientStream,
    _ deserializer: some MessageDeserializer<Message>
  ) throws(RPCError) -> Message {
    do throws(RPCError) {
      return try decompress(received, limit: stream.maxReceiveSize)
        .decoded(by: deserializer).get()
    } catch {
      stream.cancel(error)
      throw error
    }
  }

  static func decompress(_ received: ClientStream.Received, limit: Int) throws(RPCError)
    -> ReceivedMessage
  {
    guard received.frame.compressed else {
      return ReceivedMessage(bytes: received.frame.payload, wasCompressed: false)
    }
    switch received.encoding {
    case .identity:
      throw RPCError(
        code: .internalError,
        message: "the server sent a compressed message without a grpc-encoding header")
    case .unsupported(let name):
      throw RPCError(
        code: .internalError,
        message: "the server compressed a message with '\(name)', which this client does not support")
    case .gzip:
      return ReceivedMessage(
        bytes: try Gzip.inflateMessage(
          received.frame.payload, limit: limit, what: "response", limitOwner: "the limit"),
        wasCompressed: true)
    }
  }
}
