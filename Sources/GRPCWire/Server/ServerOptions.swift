public import CoreMetrics
public import Logging

/// Settings of a ``GRPCServer``.
public struct ServerOptions: Sendable {
  /// The largest request message accepted, after decompression; a larger one fails the call
  /// with RESOURCE_EXHAUSTED.
  public var maxReceiveMessageSize = 4 << 20
  /// The largest response message sent (as framed: compressed, when it is); a handler
  /// writing a larger one gets RESOURCE_EXHAUSTED thrown from the write, and the call ends
  /// with it. Handlers that size a response from a request can check
  /// ``ServerContext/maxSendMessageSize`` before building it.
  public var maxSendMessageSize = 4 << 20
  /// SETTINGS_MAX_CONCURRENT_STREAMS announced to each client.
  public var maxConcurrentStreams = 1_000
  /// The most client connections served at once. A connection beyond it is closed as soon as
  /// it is accepted, while those already open go on being served.
  public var maxConnections = 10_000
  /// The response bytes one call may have queued unsent (its client's flow-control window
  /// shut, or a slow network) before the handler's next write waits; a handler running on the
  /// event loop waits from 64 KiB already.
  public var streamSendBuffer = 1 << 20
  /// The response bytes all calls of one connection together may have queued unsent. Beyond
  /// it writers wait before they serialise their next message, first come first served, so a
  /// client that opens many calls and reads none holds about this much of the server's memory.
  public var connectionSendBuffer = 8 << 20
  /// DATA frames too small to hold even a message prefix (fewer than 5 bytes, empty ones
  /// included, not ending the stream) that one call may send; one more closes the connection
  /// with GOAWAY ENHANCE_YOUR_CALM. Each frame costs the server work and carries nothing.
  public var maxTinyFramesPerStream = 1_000
  /// The glitch limiter of each connection (see ``GlitchLimit``): past it the connection ends
  /// with GOAWAY ENHANCE_YOUR_CALM. nil turns it off.
  public var glitchLimit: GlitchLimit? = GlitchLimit()
  /// A connection with no call open for this long is sent GOAWAY and closed (gRPC's
  /// MAX_CONNECTION_IDLE); nil, the default: idle connections stay open.
  public var maxConnectionIdle: Duration?
  /// A connection open for this long is sent GOAWAY (gRPC's MAX_CONNECTION_AGE): its calls
  /// may finish, new ones go to a new connection. nil, the default: no age limit.
  public var maxConnectionAge: Duration?
  /// After ``maxConnectionAge``'s GOAWAY, how long calls still open may run before the
  /// connection is closed under them (gRPC's MAX_CONNECTION_AGE_GRACE); nil: as long as
  /// they take.
  public var maxConnectionAgeGrace: Duration?
  /// Server keepalive: with no frame from a client for this long, the server PINGs it, and
  /// closes the connection if the ACK does not come within ``keepaliveTimeout``. Finds clients
  /// that vanished without a FIN (a dead host, a dropped NAT entry). nil: no server PINGs; the
  /// default is 2 hours, as gRPC servers have it.
  public var keepaliveInterval: Duration? = .seconds(7_200)
  /// How long a keepalive PING may go unanswered.
  public var keepaliveTimeout: Duration = .seconds(20)
  /// PINGs closer together than this are strikes against the client, unless the server sent
  /// a response (headers or data) in between; past ``maxPingStrikes`` the connection ends
  /// with GOAWAY ENHANCE_YOUR_CALM and debug data `too_many_pings` (gRPC's keepalive
  /// enforcement; clients then double their interval). 10 s lets FleetConsumer's own client
  /// keepalive (20 s) through.
  public var minPingInterval: Duration = .seconds(10)
  /// Strikes allowed before the connection ends (gRPC's default: 2).
  public var maxPingStrikes = 2
  /// How long a new connection has to finish its TLS handshake and send the HTTP/2 preface and
  /// its SETTINGS; a connection that has not by then (silent, or trickling bytes) is closed.
  public var handshakeTimeout: Duration = .seconds(10)
  /// Serve TLS (1.2+, ALPN h2) with this certificate chain and private key (PEM files);
  /// nil: plaintext.
  public var tls: (certificateChainFile: String, privateKeyFile: String)?
  /// With ``tls``: mutual TLS. Client certificates are verified against the CA certificates
  /// in this PEM file; a client whose certificate does not verify fails the handshake.
  public var tlsClientCAFile: String?
  /// With ``tlsClientCAFile``: whether every client must present a certificate (the default);
  /// false lets clients without one in, while one presented must still verify.
  public var tlsRequireClientCertificate = true
  /// Run each handler as a task that prefers the server's event loop (the default): a handler
  /// that does not block starts, answers and finishes within the loop tick that brought its
  /// request, with no thread hop or wake-up. Set false for handlers that compute for long or
  /// block, so that they run on the global executor and the loop keeps serving sockets.
  public var handlersRunOnEventLoop = true
  /// Interceptors of every call, outermost first (see ``ServerInterceptor``); a method's own,
  /// given to `register`, run inside these.
  public var interceptors: [any ServerInterceptor] = []
  /// Where the server tells of its listener and connections (swift-log): listening, accept
  /// pauses and refusals, connections accepted and closed, GOAWAY, keepalive, limits a client
  /// broke and its protocol errors, with the peer and stream as metadata. Never a metadata
  /// value, so never a token. The default discards everything.
  public var logger = Logger.disabled
  /// Where the server's connection count goes (swift-metrics): the meter
  /// `rpc.server.connections` (open connections). By default the process's factory.
  public var metricsFactory: any MetricsFactory = MetricsSystem.factory
  /// How long calls in flight may finish when the server runs in a `ServiceGroup` that shuts
  /// down gracefully (``run()``).
  public var shutdownGracePeriod: Duration = .seconds(5)
  /// The event-loop threads connections are served on: the server accepts on the first and
  /// hands each new connection to the next in turn, so a server with many clients can use
  /// that many cores. Each connection, its calls and the handlers that run on the event loop
  /// stay on one loop. A server given an `eventLoop` accepts on that loop and makes the
  /// others itself. Values below 1 count as 1, the default.
  public var eventLoops = 1

  public init() {}

  /// How many glitches a connection may cause: frames that make the server reset a stream
  /// (a zero-increment WINDOW_UPDATE, DATA after the request ended, malformed or oversized
  /// headers, a request beyond ``maxConcurrentStreams``, anything else nghttp2 answers with
  /// RST_STREAM), frames that do nothing (PRIORITY, unknown frame types, empty DATA that does
  /// not end the stream) and requests refused as malformed (not POST, not gRPC's
  /// content-type, an invalid `grpc-timeout`). A token bucket per connection, with nghttp2
  /// 1.67's defaults; honest clients cause none, or a handful. Each client address has a
  /// bucket of the same size too, which its connections' glitches also take from: a client
  /// that reconnects as soon as its connection ends finds it as empty, and its next
  /// connection ends at its first glitches (not after another whole burst). Connections
  /// that cause no glitch are never ended by it. Once a connection has been ended for
  /// glitches, new connections from its address are turned away at accept for 1 s (twice
  /// as long each time it happens again soon after, up to 30 s) with GOAWAY
  /// ENHANCE_YOUR_CALM and no HTTP/2 session (on TLS, just closed): a client reconnecting
  /// in a loop costs the server an accept and a write, not a session. The address's
  /// connections already open go on.
  public struct GlitchLimit: Sendable, Hashable {
    /// Glitches allowed at once. Default 10,000.
    public var burst: Int
    /// Glitches allowed per second after that. Default 330.
    public var refillPerSecond: Int

    public init(burst: Int = 10_000, refillPerSecond: Int = 330) {
      self.burst = burst
      self.refillPerSecond = refillPerSecond
    }
  }
}
