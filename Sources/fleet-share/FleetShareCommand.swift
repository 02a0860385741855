import ArgumentParser
import FleetCommandLine
import FleetConsumer
import FleetShare
import FleetSimulator
import FleetSync
import Foundation
import GRPCObservability
import GRPCWire
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

/// `fleet-share`: live share links for Fleet Engine trips, served over HTTP.
@main
struct FleetShareCommand: AsyncParsableCommand {
  /// ArgumentParser's parsing and help, but bad flags exit 2 (ArgumentParser's own status
  /// for them is 64), also when found bad only in `run()` (Leaflet missing for --tiles).
  static func main() async {
    do {
      try await parse().run()
    } catch {
      let code = exitCode(for: error)
      guard code == .validationFailure else { exit(withError: error) }
      FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
      Foundation.exit(2)
    }
  }

  static let configuration = CommandConfiguration(
    commandName: "fleet-share",
    abstract: "Serve live share links for Fleet Engine trips: a page anyone with the link can watch.",
    discussion: """
      The first line on stdout is `listening on http://HOST:PORT`. Without --endpoint it runs \
      the demo: the Fleet Engine simulator in this process, two demo trips, and a line \
      `share link: http://HOST:PORT/s/<token>` for each.

      POST /links with `Authorization: Bearer <--admin-token>` and {"tripName": \
      "providers/<id>/trips/<id>", "ttlSeconds": N} makes a link (201 {"url", "expiresAt"}); \
      without --admin-token no link can be made over HTTP. GET /s/<token> is the live page, \
      /s/<token>/map.svg the map now, /s/<token>/events its Server-Sent Events. A link that \
      does not open is 404, an expired one 410. Each trip is followed once, however many \
      people watch, and only while someone does.

      The page is self-contained (nothing fetched from elsewhere) unless --tiles puts it on a \
      street map: Leaflet from Debian's libjs-leaflet, served by fleet-share itself, over the \
      tiles of URL_TEMPLATE ({z}, {x}, {y}, optional {s}), whose origin alone the page's \
      Content-Security-Policy adds. A vehicle whose location is older than --stale-after \
      seconds is shown dimmed, "last seen N min ago", and its events carry "stale": true. \
      Bad flags exit with status 2.

      As a replica behind a balancer (Docs/Deploying.md): GET /healthz is 200 while it serves; \
      GET /readyz 200, and 503 once it drains; GET /metrics Prometheus' text \
      (fleet_share_trips_followed, fleet_share_viewers, fleet_share_events_sent_total, \
      fleet_share_links_created_total, rpc_client_duration by status). Links carry a routing \
      key: their first 16 characters after /s/ are the same for every link of one trip. \
      SIGTERM drains: new viewers get 503, open event streams end with a retry: hint, and the \
      process exits within --drain-seconds.

      Proxies: it reaches --endpoint through the HTTP CONNECT proxy of grpc_proxy, \
      https_proxy or http_proxy unless no_proxy exempts it (as gRPC's C-core does); --proxy \
      URL names one, --no-proxy connects directly. The demo connects directly.

      Logs: --log-level (default notice) writes the follows' events to stderr: at debug \
      connections, each call and each poll. No line carries a token, a link or a key.
      """)

  @Option(help: ArgumentHelp("Fleet Engine's address; leave it out for the demo.", valueName: "host:port"))
  var endpoint: String?

  @Flag(help: "Connect to --endpoint without TLS; access tokens then travel unencrypted.")
  var plaintext = false

  @Option(help: ArgumentHelp("The provider (Google Cloud project) ID of the shared trips.", valueName: "id"))
  var provider: String?

  @Option(help: ArgumentHelp("A fixed access token.", valueName: "token"))
  var token: String?

  @Option(
    name: .customLong("token-command"),
    help: ArgumentHelp("A command printing {\"token\": ..., \"expiresAt\": <unix s>} (FLEET_TRIP_ID set).", valueName: "command"))
  var tokenCommand: String?

  @Option(
    name: .customLong("token-url"),
    help: ArgumentHelp("A URL to GET {\"token\": ..., \"expiresAt\": <unix s>} from; {tripID} is replaced.", valueName: "url"))
  var tokenURL: String?

  @Option(
    name: .customLong("service-account-key"),
    help: ArgumentHelp("A Google service-account key (JSON) to mint consumer tokens from.", valueName: "file"))
  var serviceAccountKey: String?

  @Option(help: "The address to serve HTTP on.")
  var host = "127.0.0.1"

  @Option(help: "The port to serve HTTP on (0: one the OS picks; see the first line).")
  var port = 8080

  @Option(name: .customLong("admin-token"), help: ArgumentHelp("The bearer token POST /links needs.", valueName: "token"))
  var adminToken: String?

  @Option(
    name: .customLong("link-secret"),
    help: ArgumentHelp("The secret links are sealed with (default: random, so links end with the process).", valueName: "secret"))
  var linkSecret: String?

  @Option(name: .customLong("link-ttl"), help: ArgumentHelp("How long a link lives by default.", valueName: "seconds"))
  var linkTTL: Int64 = 3_600

  @Option(
    name: .customLong("public-url"),
    help: ArgumentHelp(
      "The URL links start with, e.g. the balancer's https://share.example.com (default: http://HOST:PORT).",
      valueName: "url"))
  var publicURL: String?

  @Option(
    name: .customLong("instance-name"),
    help: ArgumentHelp("This instance's name in its logs and metrics (default: host:port).", valueName: "name"))
  var instanceName: String?

  @Option(
    name: .customLong("drain-seconds"),
    help: ArgumentHelp("At most how long the drain after SIGTERM takes before the process exits.", valueName: "seconds"))
  var drainSeconds: Double = 10

  @Option(name: .customLong("poll-interval"), help: ArgumentHelp("Seconds between polls of a watched trip (default 5; 1 for the demo).", valueName: "seconds"))
  var pollInterval: Double?

  @Option(
    name: .customLong("tiles"),
    help: ArgumentHelp("Put the page on a street map: a tile URL template with {z}, {x}, {y} (and optionally {s}).", valueName: "url-template"))
  var tiles: String?

  @Option(
    name: .customLong("tiles-attribution"),
    help: ArgumentHelp("The tiles' credit, shown on the map (required with --tiles).", valueName: "text"))
  var tilesAttribution: String?

  @Option(
    name: .customLong("tiles-max-zoom"),
    help: ArgumentHelp("The highest zoom level the tiles exist for (default 19).", valueName: "n"))
  var tilesMaxZoom: Int?

  @Option(
    name: .customLong("stale-after"),
    help: ArgumentHelp("Show the vehicle as stale when its location is older than this (default 60).", valueName: "seconds"))
  var staleAfter: Double = 60

  /// The tile layer of the --tiles flags, or nil without --tiles; throws a ValidationError
  /// naming the flag at fault.
  func tileLayer() throws -> TileLayer? {
    guard let tiles else {
      if tilesAttribution != nil { throw ValidationError("--tiles-attribution needs --tiles") }
      if tilesMaxZoom != nil { throw ValidationError("--tiles-max-zoom needs --tiles") }
      return nil
    }
    do {
      return try TileLayer(urlTemplate: tiles, attribution: tilesAttribution, maxZoom: tilesMaxZoom ?? 19)
    } catch {
      throw ValidationError(error.description)
    }
  }

  @OptionGroup(title: "Proxy") var proxy: ProxyOptions

  @OptionGroup(title: "Logging") var logging: LoggingOptions

  func validate() throws {
    let sources = [token, tokenCommand, tokenURL, serviceAccountKey].compactMap { $0 }
    if endpoint == nil {
      guard provider == nil, sources.isEmpty, !plaintext, proxy.url == nil else {
        throw ValidationError("the demo brings its own trips and tokens: give --endpoint to use --provider, --plaintext, --proxy or a token flag")
      }
    } else {
      guard let provider, !provider.isEmpty, !provider.contains("/") else {
        throw ValidationError("--endpoint needs --provider <id>")
      }
      guard sources.count == 1 else {
        throw ValidationError("--endpoint needs one of --token, --token-command, --token-url, --service-account-key")
      }
    }
    guard (0...65_535).contains(port) else { throw ValidationError("--port must be within 0...65535") }
    guard (1...31_536_000).contains(linkTTL) else { throw ValidationError("--link-ttl must be within 1...31536000") }
    if let pollInterval, !(pollInterval >= 0.1 && pollInterval.isFinite) {
      throw ValidationError("--poll-interval must be at least 0.1")
    }
    if let linkSecret, linkSecret.isEmpty { throw ValidationError("--link-secret must not be empty") }
    guard staleAfter.isFinite, (1...86_400).contains(staleAfter) else {
      throw ValidationError("--stale-after must be within 1...86400 seconds")
    }
    _ = try tileLayer()
    guard drainSeconds >= 0.1, drainSeconds <= 3_600 else {
      throw ValidationError("--drain-seconds must be within 0.1...3600")
    }
    if let publicURL {
      guard let url = URL(string: publicURL), ["http", "https"].contains(url.scheme ?? ""), url.host != nil,
        url.query == nil, url.fragment == nil, !publicURL.hasSuffix("/")
      else {
        throw ValidationError("--public-url must be http(s)://HOST[:PORT][/PATH], without a trailing slash")
      }
    }
    if let instanceName, instanceName.isEmpty || instanceName.contains(where: \.isNewline) {
      throw ValidationError("--instance-name must be one line, not empty")
    }
  }

  func run() async throws {
    var services: [any Service] = []
    let configuration: TripService.Configuration
    var demoTrips: [String] = []
    var options = TripService.Options()
    let registry = PrometheusCollectorRegistry()
    let metricsFactory = PrometheusMetricsFactory(registry: registry)
    // GetTrip calls by status: rpc_client_duration's rpc_grpc_status_code.
    let logger = logging.logger(label: "fleet-share", defaultLevel: .notice)
    options.interceptors =
      [ClientMetricsInterceptor(factory: metricsFactory)] + LoggingOptions.clientInterceptors(logger)
    let replica = ShareReplica(
      instanceName: instanceName, metricsFactory: metricsFactory, exposition: { registry.emitToBuffer() })
    if let endpoint {
      options.pollInterval = .milliseconds(Int64((pollInterval ?? 5) * 1000))
      options.proxy = proxy.proxy
      let provider: any AccessTokenProvider
      do {
        provider = try AccessTokenFlags.provider(
          token: token, tokenCommand: tokenCommand, tokenURL: tokenURL, serviceAccountKey: serviceAccountKey)
      } catch {
        throw ValidationError("--service-account-key: \(error.message)")
      }
      configuration = .init(
        endpoint: try .init(endpoint), transportSecurity: plaintext ? .plaintext : .tls(.init()),
        providerID: self.provider ?? "", accessTokenProvider: provider, options: options,
        logger: logger)
    } else {
      var simulatorOptions = SimulatorOptions()
      simulatorOptions.logger = logging.logger(label: "fleet-share.simulator", defaultLevel: .notice)
      let simulator = try await FleetSimulator.start(options: simulatorOptions)
      services.append(simulator)
      demoTrips = [
        try simulator.createDemoTrip(providerID: "demo-provider", tripID: "demo-ride"),
        try simulator.createDemoTrip(
          providerID: "demo-provider", tripID: "demo-multi-stop", intermediateDestinations: 2),
      ]
      options.pollInterval = .milliseconds(Int64((pollInterval ?? 1) * 1000))
      options.proxy = .none
      configuration = .init(
        endpoint: try .init(simulator.endpoint), transportSecurity: .plaintext,
        providerID: "demo-provider", accessTokenProvider: FixedAccessTokenProvider(AccessToken("demo-token")),
        options: options, logger: logger)
    }
    var page = SharePageOptions(staleAfter: .milliseconds(Int64(staleAfter * 1000)))
    if let tiles = try tileLayer() {
      do {
        page.streetMap = StreetMap(tiles: tiles, leaflet: try LeafletAssets())
      } catch {
        throw ValidationError("--tiles: \(error.description)")
      }
    }
    let service = try TripService(configuration: configuration)
    services.append(service)
    let links = try ShareLinks(secret: try linkSecret.map { Array($0.utf8) } ?? ShareLinks.randomSecret())
    let base = PosixMutex("http://\(host):\(port)")
    let server = ShareServer(
      fanOut: TripFanOut(service: service), links: links, adminToken: adminToken,
      providerID: configuration.providerID, defaultTTLSeconds: linkTTL, baseURL: { base.withLock { $0 } },
      page: page, replica: replica)
    let (host, linkTTL, demoLinks, serverLogger, publicURL) = (self.host, self.linkTTL, demoTrips, logger, self.publicURL)
    let application = Application(
      router: server.router(),
      // A deep accept queue: when an instance dies, its viewers reconnect to the others all at
      // once, and with Hummingbird's default (256) the overflow's SYNs, the balancer's health
      // checks among them, wait for a retransmit; three failed checks take a live instance out.
      configuration: ApplicationConfiguration(address: .hostname(host, port: port), backlog: 4_096),
      onServerRunning: { channel in
        let url = "http://\(host):\(channel.localAddress?.port ?? 0)"
        base.withLock { $0 = publicURL ?? url }
        replica.name("\(host):\(channel.localAddress?.port ?? 0)")
        serverLogger.notice("serving", metadata: ["instance": "\(replica.instanceName ?? "")", "url": "\(url)"])
        print("listening on \(url)")
        let expiresAt = Int64(Date().timeIntervalSince1970) + linkTTL
        for trip in demoLinks {
          if let token = try? links.token(for: trip, expiresAt: expiresAt) {
            print("share link: \(publicURL ?? url)/s/\(token)")
          }
        }
        fflush(nil)
      },
      logger: Logger.disabled)
    services.append(application)
    // Last, so that shutdown starts with it (the group shuts services down in reverse order).
    services.append(
      DrainOnShutdown(replica: replica, linger: .milliseconds(Int64(min(1, drainSeconds / 2) * 1000)), logger: logger))
    var groupConfiguration = ServiceGroupConfiguration(
      services: services.map { .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup) },
      gracefulShutdownSignals: [.sigterm, .sigint], logger: Logger.disabled)
    groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(Int64(drainSeconds * 1000))
    let group = ServiceGroup(configuration: groupConfiguration)
    try await group.run()
  }
}
