internal import FoundationEssentials
public import CoreMetrics
public import Logging
public import GRPCWire

extension TripService {
  /// Everything a ``TripService`` needs: where Fleet Engine is, whose trips, how to
  /// authorize, and how to follow.
  public struct Configuration: Sendable {
    /// The Fleet Engine endpoint, e.g. `fleetengine.googleapis.com:443`.
    public var endpoint: Endpoint
    /// TLS (the default) or plaintext.
    public var transportSecurity: TransportSecurity
    /// The provider's ID (its Google Cloud project ID); every trip name must carry it.
    public var providerID: String
    /// Where per-trip access tokens come from.
    public var accessTokenProvider: any AccessTokenProvider
    /// Polling, retries, deadlines, request header, callbacks.
    public var options: Options
    /// Where the service tells what it does (swift-log): models following and stopping,
    /// failed updates with their category and the retry's delay, token fetches and their
    /// failures, and — with `grpc.`-prefixed metadata — its connections (see
    /// ``ChannelOptions/logger``). Trip names appear; tokens and metadata values never do.
    /// The default discards everything.
    public var logger: Logger
    /// Where the service's metrics go (swift-metrics): `fleetconsumer.trips.followed` (a
    /// meter: models following now), `fleetconsumer.trip.updates` (a counter: responses that
    /// updated a model) and `fleetconsumer.trip.errors` (a counter per `category`,
    /// `serverOrNetwork`, `client` or `other`: failed updates). By default the process's factory
    /// (`MetricsSystem.bootstrap`), which discards them until bootstrapped. Call metrics come
    /// from interceptors (``Options/interceptors``, GRPCObservability).
    public var metricsFactory: any MetricsFactory

    /// A configuration; TLS with the system's trust roots unless told otherwise.
    public init(
      endpoint: Endpoint, transportSecurity: TransportSecurity = .tls(TLS()), providerID: String,
      accessTokenProvider: any AccessTokenProvider, options: Options = Options(),
      logger: Logger = .disabled, metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
      self.logger = logger
      self.metricsFactory = metricsFactory
      self.endpoint = endpoint
      self.transportSecurity = transportSecurity
      self.providerID = providerID
      self.accessTokenProvider = accessTokenProvider
      self.options = options
    }
  }

  /// A server's host and port.
  public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// A DNS name, an IPv4 address, or an IPv6 address without brackets.
    public var host: String
    /// The TCP port, 1-65535.
    public var port: Int

    /// `host` (no brackets around an IPv6 address) and `port`.
    public init(host: String, port: Int) {
      self.host = host
      self.port = port
    }

    /// Parses `HOST:PORT` (`[v6-address]:PORT` for IPv6); throws ``ConfigurationError``.
    public init(_ text: String) throws(ConfigurationError) {
      let host: Substring
      let port: Substring
      if text.hasPrefix("[") {
        guard let close = text.firstIndex(of: "]"),
          text[text.index(after: close)...].hasPrefix(":")
        else {
          throw ConfigurationError("endpoint \"\(text)\" is not [IPV6]:PORT")
        }
        host = text[text.index(after: text.startIndex)..<close]
        port = text[text.index(close, offsetBy: 2)...]
      } else {
        guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
          throw ConfigurationError("endpoint \"\(text)\" is not HOST:PORT")
        }
        host = text[..<colon]
        port = text[text.index(after: colon)...]
      }
      guard !host.isEmpty, let number = Int(port), (1...65535).contains(number) else {
        throw ConfigurationError("endpoint \"\(text)\" is not HOST:PORT with a port 1-65535")
      }
      self.init(host: String(host), port: number)
    }

    /// `host:port`, with brackets around an IPv6 address.
    public var description: String {
      host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Whether the host is this machine (`localhost`, 127.0.0.0/8, `::1`).
    public var isLoopback: Bool {
      host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
  }

  /// How the connection to Fleet Engine is protected.
  public enum TransportSecurity: Sendable {
    /// No encryption: for a local simulator or a test server. Tokens are sent over it only
    /// to a loopback host, unless ``Options/allowsTokensOverPlaintext`` is set.
    case plaintext
    /// TLS with the server's certificate and host name verified.
    case tls(TLS)
  }

  /// TLS settings: TLS 1.2 or later, ALPN `h2`, the certificate chain and host name checked.
  public struct TLS: Sendable, Hashable {
    /// A PEM file of CA certificates to trust instead of the system's.
    public var trustedCertificatesFile: String?
    /// The name the server's certificate must carry when it is not the endpoint's host.
    public var serverHostnameOverride: String?

    /// TLS trusting `trustedCertificatesFile` (nil: the system's roots).
    public init(trustedCertificatesFile: String? = nil, serverHostnameOverride: String? = nil) {
      self.trustedCertificatesFile = trustedCertificatesFile
      self.serverHostnameOverride = serverHostnameOverride
    }
  }

  /// How a service follows its trips.
  public struct Options: Sendable {
    /// Time from one `GetTrip` of a trip to the next: a poll is due one interval after the
    /// previous one was due (at once if that one took longer; polls of a trip never
    /// overlap). At least 100 ms. Default 5 s, the floor of Google's JavaScript
    /// journey-sharing library.
    public var pollInterval: Duration = .seconds(5)
    /// The deadline of each `GetTrip` call. Default 10 s.
    public var callTimeout: Duration = .seconds(10)
    /// Backoff after failed updates, by error category.
    public var retryPolicy = RetryPolicy()
    /// How long before its expiry a cached token is replaced; never more than half the
    /// token's lifetime. Default 60 s.
    public var tokenRefreshMargin: Duration = .seconds(60)
    /// `RequestHeader.region_code`, which Fleet Engine requires: a CLDR region code such as
    /// `US` or `DE`. Default `US`.
    public var regionCode = "US"
    /// `RequestHeader.language_code` (BCP-47, e.g. `en-US`); empty: not sent.
    public var languageCode = ""
    /// The set of trip fields asked for. Default `JOURNEY_SHARING_V1S`, the view meant for
    /// server-to-server journey sharing.
    public var tripView = FleetEngine.TripView.journeySharingV1s
    /// Where subscriber callbacks run. Default: a serial queue the service owns.
    public var callbackExecutor = CallbackExecutor.serviceQueue
    /// Follow through FleetConsumer's streaming trip feed (`fleetconsumer.v1.TripFeed/
    /// WatchTrip`) where the server offers it, such as the embedded simulator: changes then
    /// arrive as they happen instead of once per poll. When the server answers
    /// UNIMPLEMENTED (real Fleet Engine has no feed), the service polls `GetTrip` from then
    /// on, without reporting an error. Off by default.
    public var followsTripFeed = false
    /// Send bearer tokens over plaintext to a host that is not loopback. Off by default: a
    /// token on an unencrypted network is a leaked token.
    public var allowsTokensOverPlaintext = false
    /// The most HTTP/2 connections the service opens to its endpoint, shared out among its
    /// event loops. Every trip followed through the feed holds a stream; a new connection
    /// opens only when a loop's open ones have no stream left under the server's
    /// MAX_CONCURRENT_STREAMS. Default 8; at least 1.
    public var maxConnections = 8
    /// The HTTP CONNECT proxy between the service and Fleet Engine (``ChannelOptions/Proxy``):
    /// by default the environment's (`https_proxy` and friends, `no_proxy`), as gRPC's C-core
    /// reads it; `.none` connects directly, `.url("http://user:password@proxy:3128")` through
    /// that proxy. TLS to Fleet Engine runs end to end through the tunnel.
    public var proxy = ChannelOptions.Proxy.environment
    /// The most event-loop threads that follow the service's trips. A model is given one
    /// for its life, and its polls, responses and feed stream all run there, on connections
    /// of that loop (so there are at most ``maxConnections`` loops, each needing a
    /// connection; the connections beyond each loop's first are shared among them).
    ///
    /// Loops start as the trips need them: the first model starts one, and a loop takes new
    /// models until it has ``tripsPerEventLoop`` polling in the same part of the poll
    /// interval (a model polls at the phase it was made at, when it is followed at once);
    /// then the next loop starts, and once all have started, new models go to the loop with
    /// the fewest there. One loop is the cheapest per update, as polls falling due together share a write and a read (at 10,000 trips
    /// polled at 1 Hz on a 2-core machine, two loops cost 3–10 % more CPU per update); past
    /// about 10,000 polls a second, one thread queues responses behind each other (at
    /// 20,000 trips, callback latency p99 of about 500 ms on one loop, under 100 ms on two).
    /// Default ``Options/availableCores``; at least 1.
    public var eventLoops = Options.availableCores
    /// How many trips, spread over the poll interval, a loop takes before the next one starts
    /// (see ``eventLoops``): counted per tenth of the interval, so that trips made together
    /// are shared among loops as their polls are. Default 12,000: 10,000 trips spread over
    /// the interval, never quite evenly, stay on one loop. 1 spreads models over all the loops
    /// evenly. At least 1.
    public var tripsPerEventLoop = 12_000
    /// How the service notices a dead connection — a network path that drops packets
    /// without a FIN or RST — and replaces it: HTTP/2 keepalive PINGs (see ``Keepalive``).
    /// Default ``Keepalive/standard``: a feed stream on a dead connection is reported
    /// (UNAVAILABLE) within 30 s and reopened on a new connection. nil turns it off: a dead
    /// connection is then noticed only by the operating system, after minutes, and a feed
    /// stream on it stays silent until then.
    public var keepalive: Keepalive? = .standard
    /// Keep other trips out of what subscribers see. On a shared vehicle (or one that serves
    /// trips back to back) Fleet Engine lists every stop of the vehicle in a trip's
    /// `remaining_waypoints` and `vehicle_waypoints`, other riders' included; Google's guide
    /// on retrieving trips directly says to filter them before showing a trip. On (the
    /// default), waypoints whose `trip_id` names another trip are removed, and when the
    /// vehicle's next stop is another trip's, `eta_to_first_waypoint` (and
    /// ``TripModelEvent/etaToNextWaypoint(_:)``) is the ETA of this trip's own next stop, and
    /// `remaining_time_to_first_waypoint` the time until then. The active route and its
    /// distance still lead to the vehicle's next stop, whichever trip it serves.
    public var hidesOtherTrips = true
    /// Interceptors of every call the service makes (``ChannelOptions/interceptors``):
    /// metrics and tracing (GRPCObservability), logging or policy of your own. When all of
    /// them are `LoopClientInterceptor`s (GRPCObservability's metrics and logging ones are), a
    /// followed trip's polls run them on the loop, with no task; with any other one among
    /// them, each poll runs them in a task of its own, on the loop.
    public var interceptors: [any ClientInterceptor] = []

    /// The defaults above.
    public init() {}

    /// The cores this process may run on (`ProcessInfo.activeProcessorCount`), at least 1.
    public static var availableCores: Int {
      max(1, ProcessInfo.processInfo.activeProcessorCount)
    }
  }

  /// HTTP/2 keepalive, gRPC's way (its client keepalive design, A8) of telling a dead
  /// connection from a quiet one.
  ///
  /// While a call is open on a connection — a feed stream, a poll in flight — it sends a PING
  /// every `interval`; a PING unanswered for `timeout` ends the connection: its calls fail
  /// with UNAVAILABLE (category `.serverOrNetwork`, ``RPCError/isInterrupted``), subscribers
  /// are told, and the model's next call goes to a new connection. A poll that times out
  /// (DEADLINE_EXCEEDED) on a connection that has received nothing for `timeout` makes it
  /// PING at once, as polls are rarely in flight when the interval ends; so a dead
  /// connection under a poller is replaced one `timeout` after its first timed-out poll
  /// instead of being reused. An idle service sends no PINGs. A server that answers GOAWAY
  /// `too_many_pings` doubles the interval for the service's later PINGs (gRPC servers by
  /// default take one PING per 5 minutes on a connection they send no data on; the trip
  /// feed sends data whenever the vehicle moves).
  public struct Keepalive: Sendable, Hashable {
    /// Time between PINGs while calls are open.
    public let interval: Duration
    /// How long a PING may go unanswered before its connection is given up.
    public let timeout: Duration

    /// A PING every 20 s, 10 s to answer: a dead connection under a feed stream is reported
    /// within 30 s. Ten seconds are far more than a live connection's round trip, congested
    /// or mobile, takes, and as long as the default ``Options/callTimeout``; twenty keep a
    /// quiet stream's NAT and firewall entries alive and stay above the 10 s floor grpc-java
    /// puts under its clients' keepalive time.
    public static let standard = Keepalive(checked: .seconds(20), timeout: .seconds(10))

    /// PINGs every `interval`, each given up after `timeout`; throws ``ConfigurationError``
    /// unless both are positive.
    public init(interval: Duration, timeout: Duration) throws(ConfigurationError) {
      guard interval > .zero else {
        throw ConfigurationError("the keepalive interval must be positive, not \(interval)")
      }
      guard timeout > .zero else {
        throw ConfigurationError("the keepalive timeout must be positive, not \(timeout)")
      }
      self.init(checked: interval, timeout: timeout)
    }

    private init(checked interval: Duration, timeout: Duration) {
      self.interval = interval
      self.timeout = timeout
    }
  }

  /// A configuration that cannot work; the message says what to change.
  public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What to change.
    public var message: String

    /// An error saying `message`.
    public init(_ message: String) {
      self.message = message
    }

    /// The message.
    public var description: String { message }
  }
}
