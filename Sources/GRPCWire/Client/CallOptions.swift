public import CoreMetrics
public import Logging

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
  /// The largest request message sent (its bytes as framed, after any compression); a larger
  /// one fails the call with RESOURCE_EXHAUSTED before it is sent. nil: the service config's
  /// `maxRequestMessageBytes`, else no limit.
  public var maxSendMessageSize: Int?
  /// While the channel is not ready (connecting after a failure, in backoff), wait for it —
  /// up to the call's timeout — instead of failing at once with UNAVAILABLE.
  public var waitForReady = false
  /// Interceptors of this call, run after the channel's (``ChannelOptions/interceptors``).
  public var interceptors: [any ClientInterceptor] = []
  /// Told when each attempt of this call starts under a service config's retry or hedging
  /// policy (not called for a call without one): what a tracing interceptor records as span
  /// events. Runs on the calling task or the call's driver; keep it short.
  public var attemptObserver: (@Sendable (CallAttempt) -> Void)?
  /// The most request bytes (as framed) this client-streaming or bidirectional call keeps for
  /// replay under a retry or hedging policy; nil: ``ChannelOptions/perCallRetryBufferLimit``.
  public var retryBufferLimit: Int?

  /// Message compression algorithms.
  public enum Compression: String, Sendable, Hashable {
    case gzip
  }

  public init(
    timeout: Duration? = nil, metadata: Metadata = Metadata(), compression: Compression? = nil,
    maxReceiveMessageSize: Int? = nil, waitForReady: Bool = false,
    interceptors: [any ClientInterceptor] = []
  ) {
    self.interceptors = interceptors
    self.timeout = timeout
    self.metadata = metadata
    self.compression = compression
    self.maxReceiveMessageSize = maxReceiveMessageSize
    self.waitForReady = waitForReady
  }
}

/// One attempt of a call under a retry or hedging policy (``CallOptions/attemptObserver``).
public struct CallAttempt: Sendable, Hashable {
  /// From 1; attempts after the first send `grpc-previous-rpc-attempts: number - 1`.
  public var number: Int
  /// Whether the hedging policy started it (else the retry policy, or the first attempt).
  public var hedged: Bool

  public init(number: Int, hedged: Bool) {
    self.number = number
    self.hedged = hedged
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
  /// Plaintext (the default) or TLS.
  public var transportSecurity: TransportSecurity = .plaintext
  /// Send `authorization` metadata over plaintext to addresses that are not loopback. Off by
  /// default: a bearer token on an unencrypted network is a leaked token.
  public var allowInsecureCredentials = false
  /// An HTTP CONNECT proxy in the way to the target: by default the environment's
  /// (`grpc_proxy`, `https_proxy`, `http_proxy`, and `no_proxy`), as gRPC's C-core reads it.
  /// TLS to the target runs through the tunnel, end to end, with the target's name (inside
  /// the TLS to an `https://` proxy).
  public var proxy = Proxy.environment
  /// What an `https://` proxy's certificate is verified against (with the proxy's host name
  /// as SNI and the name it must carry); nil: the channel's own TLS trust roots when it uses
  /// TLS, else the system's.
  public var proxyTrustRoots: TLSConfiguration.TrustRoots?
  /// gRPC's service config (``ServiceConfig``, from its JSON form): per-method `timeout`,
  /// `waitForReady` and `maxResponseMessageBytes`, which a call's own ``CallOptions``
  /// override (a shorter timeout, its own size limits), and `maxRequestMessageBytes`;
  /// `retryPolicy`, `hedgingPolicy` and `retryThrottling` on calls of all four kinds
  /// (proposal A6; streamed requests are replayed from a bounded buffer, see
  /// ``retryBufferSize``). nil: none, and calls pay one nil check for it.
  public var serviceConfig: ServiceConfig?
  /// The most request bytes (as framed) all the channel's client-streaming and bidirectional
  /// calls under a retry or hedging policy keep for replay at once (A6's replay buffer); a call
  /// whose next message would not fit is committed to its current attempt. 16 MiB, as
  /// grpc-java's `retryBufferSize` and grpc-dotnet's `MaxRetryBufferSize`.
  public var retryBufferSize = 16 << 20
  /// The most request bytes one such call keeps for replay (``CallOptions/retryBufferLimit``
  /// overrides it per call). 1 MiB, as grpc-java's `perRpcBufferLimit` and grpc-dotnet's
  /// `MaxRetryBufferPerCallSize`.
  public var perCallRetryBufferLimit = 1 << 20
  /// How long to wait between connection attempts (gRPC's connection-backoff algorithm).
  public var backoff = Backoff()
  /// HTTP/2 keepalive PINGs; nil: none.
  public var keepalive: Keepalive? = nil
  /// How calls spread over the target's addresses.
  public var loadBalancing = LoadBalancing.pickFirst
  /// The most connections to the target; more are opened only when the open ones have no
  /// stream left under the server's MAX_CONCURRENT_STREAMS.
  public var maxConnections = 8
  /// Places for connections beyond this channel's first, shared with other channels (give
  /// each the same ``SharedConnections``); nil: only ``maxConnections`` limits them.
  public var sharedConnections: SharedConnections?
  /// Interceptors of every call on the channel, outermost first (see ``ClientInterceptor``).
  public var interceptors: [any ClientInterceptor] = []
  /// Where the channel tells of its connections (swift-log): attempts, readiness, losses and
  /// failures, GOAWAY, keepalive, backoff and transparent retries, TLS and protocol errors,
  /// with the target, connection, peer and stream as metadata. Never a metadata value, so
  /// never a token. The default discards everything.
  public var logger = Logger.disabled
  /// Where the channel's connection count goes (swift-metrics): the meter
  /// `rpc.client.connections` (ready connections) with dimension `server.address`. By
  /// default the process's factory, which discards it until bootstrapped.
  public var metricsFactory: any MetricsFactory = MetricsSystem.factory

  public init() {}

  /// gRPC's connection backoff (doc/connection-backoff.md), with its defaults.
  public struct Backoff: Sendable, Hashable {
    public var initial: Duration = .seconds(1)
    public var multiplier: Double = 1.6
    public var jitter: Double = 0.2
    public var maximum: Duration = .seconds(120)
    /// An attempt (TCP, TLS, the server's first SETTINGS) may take at least this long.
    public var minimumConnectTimeout: Duration = .seconds(20)

    public init() {}
  }

  /// HTTP/2 PINGs that detect a dead peer (a black-holed connection), as in gRPC's client
  /// keepalive design (A8).
  ///
  /// A connection PINGs `interval` after it became ready, its first call started or its last
  /// PING was answered, if a call is open then (or always, with `permitWithoutCalls`). It also
  /// PINGs at once when a call's deadline passes on it after nothing has arrived from the
  /// server for `timeout`: a connection whose calls are short (polls) rarely has one open when
  /// the interval ends, and a dead one must not take call after call until each times out.
  public struct Keepalive: Sendable, Hashable {
    /// Time between PINGs. A server's `too_many_pings` GOAWAY (ENHANCE_YOUR_CALM) doubles it
    /// for this channel's connections, each time one arrives.
    public var interval: Duration
    /// A PING unanswered this long ends the connection; its calls fail with UNAVAILABLE
    /// (interrupted) and the next calls go to a new connection.
    public var timeout: Duration
    /// Also ping while no call is open. Off by default: an idle channel sends nothing, and
    /// servers (grpcio's ping policy) may answer idle PINGs with `too_many_pings`.
    public var permitWithoutCalls: Bool

    public init(interval: Duration, timeout: Duration = .seconds(20), permitWithoutCalls: Bool = false) {
      self.interval = interval
      self.timeout = timeout
      self.permitWithoutCalls = permitWithoutCalls
    }
  }

  /// Which address a new connection goes to.
  public enum LoadBalancing: Sendable, Hashable {
    /// One connection to the first address that accepts, the next ones as fallbacks.
    case pickFirst
    /// A connection per address; calls take turns.
    case roundRobin
  }
}

/// A response with the metadata around it.
public struct ClientResponse<Message: Sendable>: Sendable {
  public var message: Message
  /// The response headers' metadata.
  public var initialMetadata: Metadata
  /// The trailers' metadata (grpc-status and friends removed).
  public var trailingMetadata: Metadata
}
