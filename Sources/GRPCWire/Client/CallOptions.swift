/// Per-call settings.
public struct CallOptions: Sendable {
  /// How long the call may take, from when it is started; sent as `grpc-timeout` and enforced
  /// here too (the stream is reset and the call fails with DEADLINE_EXCEEDED). nil: no limit.
  public var timeout: Duration?
  /// Custom metadata sent with the request headers. Reserved names (`:…`, `grpc-…`,
  /// `content-type`, `te`, `user-agent`, …) are not sent; invalid keys or values fail the call
  /// with INVALID_ARGUMENT before anything is sent.
  public var metadata: Metadata
  /// Compress request messages with this algorithm (each message can opt out when written).
  public var compression: Compression?
  /// The largest response message accepted, after decompression; nil: the channel's default.
  public var maxReceiveMessageSize: Int?

  /// Message compression algorithms.
  public enum Compression: String, Sendable, Hashable {
    case gzip
  }

  public init(
    timeout: Duration? = nil, metadata: Metadata = Metadata(), compression: Compression? = nil,
    maxReceiveMessageSize: Int? = nil
  ) {
    self.timeout = timeout
    self.metadata = metadata
    self.compression = compression
    self.maxReceiveMessageSize = maxReceiveMessageSize
  }
}

/// Settings for all calls of a channel.
public struct ChannelOptions: Sendable {
  /// The default largest response message (4 MiB, as in other gRPC implementations).
  public var maxReceiveMessageSize: Int = 4 << 20
  /// Sent as `user-agent`, before our own `grpc-swift-fleetconsumer/<version>`.
  public var userAgentPrefix: String?
  /// The per-stream receive window (SETTINGS_INITIAL_WINDOW_SIZE): the most a stream's unread
  /// responses can occupy before the server must wait.
  public var streamWindow: Int = 4 << 20
  /// The connection's receive window, shared by its streams.
  public var connectionWindow: Int = 16 << 20

  public init() {}
}

/// A response with the metadata around it.
public struct ClientResponse<Message: Sendable>: Sendable {
  public var message: Message
  /// The response headers' metadata.
  public var initialMetadata: Metadata
  /// The trailers' metadata (grpc-status and friends removed).
  public var trailingMetadata: Metadata
}
