/// The responses of a server-streaming or bidirectional call, in order.
///
/// Iterate it once. Iteration ends when the server ends the call with OK and throws
/// ``RPCError`` otherwise. Reading is what opens the flow-control window: a server cannot get
/// more than one stream window ahead of the reader.
public struct ResponseStream<Message: Sendable>: AsyncSequence, Sendable {
  public typealias Element = Message
  public typealias Failure = any Error

  let source: CallSource
  let decode: @Sendable (ClientStream.Received, ClientStream) throws -> Message

  init(_ source: CallSource, deserializer: some MessageDeserializer<Message>) {
    self.source = source
    self.decode = { received, stream in try ResponseDecoding.decode(received, stream, deserializer) }
  }

  /// The response headers' metadata, waiting for them if needed. Empty for a trailers-only
  /// response; throws the call's error when it failed before any headers.
  public func initialMetadata() async throws -> Metadata {
    try await source.stream().initialMetadata()
  }

  /// The trailers' metadata once the call is over (also for a failed call), else nil.
  public var trailingMetadata: Metadata? {
    switch source.current?.outcome {
    case .success(let metadata)?: metadata
    case .failure(let error)?: error.metadata
    case nil: nil
    }
  }

  /// Payload bytes of responses that have arrived but not been read yet (what a slow reader
  /// costs in memory; flow control bounds it by the stream window).
  public var bufferedByteCount: Int { source.current?.bufferedResponseBytes ?? 0 }

  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(source: source, decode: decode)
  }

  public struct AsyncIterator: AsyncIteratorProtocol {
    var source: CallSource
    let decode: @Sendable (ClientStream.Received, ClientStream) throws -> Message

    public mutating func next() async throws -> Message? {
      let stream: ClientStream
      switch source {
      case .stream(let direct):
        stream = direct
      case .attempts(let attempts):
        // Under a retry or hedging policy: responses come from the committed attempt only.
        stream = try await attempts.committedStream()
        source = .stream(stream)
      }
      guard let received = try await stream.nextMessage() else { return nil }
      return try decode(received, stream)
    }
  }
}

/// Where a streaming call's writer and reader go: its one stream, or, under a retry or hedging
/// policy, its attempts (``StreamingAttempts``).
enum CallSource: Sendable {
  case stream(ClientStream)
  case attempts(StreamingAttempts)

  /// The stream responses come from: under a policy, the committed attempt, once there is one.
  func stream() async throws -> ClientStream {
    switch self {
    case .stream(let stream): stream
    case .attempts(let attempts): try await attempts.committedStream()
    }
  }

  /// The stream responses come from now: under a policy, the committed attempt, else the
  /// latest; nil before any.
  var current: ClientStream? {
    switch self {
    case .stream(let stream): stream
    case .attempts(let attempts): attempts.summary.stream
    }
  }
}

/// Writes the requests of a client-streaming or bidirectional call.
public struct RequestWriter<Message>: Sendable {
  let target: CallSource
  let serialize: @Sendable (Message, inout [UInt8]) throws -> Void
  let compression: CallOptions.Compression?

  init(
    _ target: CallSource, serializer: some MessageSerializer<Message>,
    compression: CallOptions.Compression?
  ) {
    self.target = target
    self.serialize = { message, buffer in try serializer.serialize(message, into: &buffer) }
    self.compression = compression
  }

  /// Sends one message; suspends while the server's flow-control window is closed and more
  /// than 1 MiB is already waiting. `compress: false` sends this message uncompressed even when
  /// the call compresses (a compressed message needs the call's `compression` set).
  /// Throws the call's error once it is over.
  ///
  /// Under a retry or hedging policy the message is also kept for replay until the call is
  /// committed (see ``ChannelOptions/retryBufferSize``).
  public func write(_ message: Message, compress: Bool = true) async throws {
    var bytes: [UInt8] = []
    do {
      try MessageFramer.append(to: &bytes, compress: compress && compression != nil) {
        try serialize(message, &$0)
      }
    } catch {
      throw RPCError(code: .internalError, message: "could not serialize a request: \(error)", cause: error)
    }
    switch target {
    case .stream(let stream): try await stream.write(bytes, finish: false)
    case .attempts(let attempts): try await attempts.write(bytes)
    }
  }

  /// Ends the request stream (half-close); the server sees the end of its input.
  public func finish() {
    switch target {
    case .stream(let stream): stream.finishRequests()
    case .attempts(let attempts): attempts.finishRequests()
    }
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
