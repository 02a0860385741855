internal import FleetSync

/// What a server handler knows about its call, and how it sets response metadata.
///
/// Sendable: handlers may pass it to child tasks. Metadata set after the response headers
/// went out (with the first response message) is ignored for the headers; trailing metadata
/// may be set until the handler returns.
public final class ServerContext: Sendable {
  /// `/package.Service/Method`.
  public let path: String
  /// The method called: the path's service and method names.
  public var method: MethodDescriptor { MethodDescriptor(path: path) }
  /// The request's custom metadata (reserved and pseudo-headers removed).
  public let requestMetadata: Metadata
  /// The client's deadline (from `grpc-timeout`), as a time from when the call arrived.
  public let timeout: Duration?
  /// The client's address, `host:port`.
  public let peer: String
  /// The largest response message the server sends (``ServerOptions/maxSendMessageSize``).
  public let maxSendMessageSize: Int

  private let state = PosixMutex(MutableState())
  /// The session the call came on, for ``dropConnection()``: reached on its loop only.
  private let session: LoopBound<HTTP2Session>

  private struct MutableState {
    var initialMetadata = Metadata()
    var trailingMetadata = Metadata()
    var compressResponses = false
    var lastRequestCompressed = false
  }

  init(
    path: String, requestMetadata: Metadata, timeout: Duration?, peer: String,
    maxSendMessageSize: Int = 4 << 20, session: LoopBound<HTTP2Session>
  ) {
    (self.path, self.requestMetadata, self.timeout) = (path, requestMetadata, timeout)
    (self.peer, self.maxSendMessageSize) = (peer, maxSendMessageSize)
    self.session = session
  }

  /// Closes this call's TCP connection abruptly, without GOAWAY: every call on it (this one
  /// included) sees the connection drop. For fault injection.
  ///
  /// The close is queued to the connection's event loop, so it runs before anything the
  /// handler does afterwards — its answer included — is written, and never inside the
  /// HTTP/2 session's own callbacks (a cancellation handler may call this from there).
  public func dropConnection() {
    session.loop.execute { [session] in session.value.dropConnection() }
  }

  /// Metadata for the response headers (sent with the first message, or with the status).
  public func setInitialMetadata(_ metadata: Metadata) {
    state.withLock { $0.initialMetadata = metadata }
  }

  /// Metadata for the trailers, sent with the status.
  public func setTrailingMetadata(_ metadata: Metadata) {
    state.withLock { $0.trailingMetadata = metadata }
  }

  /// Compress response messages with gzip when the client accepts it (from the next message;
  /// the response headers must not have gone out yet for `grpc-encoding` to be announced).
  public func setCompressResponses(_ compress: Bool) {
    state.withLock { $0.compressResponses = compress }
  }

  /// Whether the request message read last arrived compressed (its prefix flag was 1).
  public var lastRequestWasCompressed: Bool { state.withLock { $0.lastRequestCompressed } }

  func recordRequest(compressed: Bool) {
    state.withLock { $0.lastRequestCompressed = compressed }
  }

  var initialMetadata: Metadata { state.withLock { $0.initialMetadata } }
  var trailingMetadata: Metadata { state.withLock { $0.trailingMetadata } }
  var compressResponses: Bool { state.withLock { $0.compressResponses } }
}

/// The requests of a client-streaming or bidirectional call, as the handler reads them.
/// Iteration ends when the client finishes its stream; it throws CANCELLED if the client
/// resets the call.
public struct RequestStream<Message: Sendable>: AsyncSequence, Sendable {
  public typealias Element = Message
  public typealias Failure = any Error

  let stream: ServerStream
  let decode: @Sendable ([UInt8]) throws -> Message

  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(stream: stream, decode: decode)
  }

  public struct AsyncIterator: AsyncIteratorProtocol {
    let stream: ServerStream
    let decode: @Sendable ([UInt8]) throws -> Message

    public mutating func next() async throws -> Message? {
      guard let bytes = try await stream.nextRequest() else { return nil }
      do {
        return try decode(bytes)
      } catch {
        throw RPCError(
          code: .internalError, message: "could not decode a request message: \(error)",
          cause: error)
      }
    }
  }
}

/// Sends the responses of a server-streaming or bidirectional call.
public struct ResponseWriter<Message>: Sendable {
  let stream: ServerStream
  let serialize: @Sendable (Message, inout [UInt8]) throws -> Void

  /// Sends one response; suspends while the client's flow-control window is closed and more
  /// than 1 MiB is queued. `compress: false` keeps this message uncompressed when the context
  /// compresses responses. Throws CANCELLED once the client has gone.
  public func write(_ message: Message, compress: Bool = true) async throws {
    try await stream.writeResponse(compress: compress) { try serialize(message, &$0) }
  }
}
