import ArgumentParser
import FleetCommandLine
import FleetConsumer
import FleetSimulator
import Foundation
import GRPCWire
import Logging

/// `fleet-follow`: follows one trip and prints what a subscriber sees.
///
/// Exit status: 0 once a terminal status has been printed or after `--max-seconds`; 2 for
/// bad flags (ArgumentParser's usage errors, remapped in ``FleetFollowMain``); 1 when the
/// trip cannot be followed at all (a configuration the service refuses).
struct FleetFollow: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleet-follow",
    abstract: "Follow one Fleet Engine trip and print what TripModel subscribers see.",
    discussion: """
      Polls maps.fleetengine.v1.TripService/GetTrip and prints one line per callback: with \
      --json, one JSON object per line on stdout (trip, tripStatus, remainingDistance, \
      activeRoute, vehicleLocation, pickupLocation, dropoffLocation, pickupETA, dropoffETA, \
      remainingWaypoints, intermediateDestinations, activeRouteTraffic, vehicleID, tripType, \
      numberOfPassengers, intermediateDestinationIndex, remainingRoute, \
      remainingRouteDistance, remainingRouteTraffic, etaToNextWaypoint, error), logs and the \
      model's state on stderr; without it, a readable live view. Other trips' waypoints \
      (shared vehicles) are left out. Exits 0 once COMPLETE or CANCELED has been \
      printed, or after --max-seconds.

      Without --endpoint it runs the demo: it starts the Fleet Engine simulator in this \
      process on a free loopback port, creates a demo trip there and follows it to COMPLETE \
      over real HTTP/2 (polling every second unless --poll-interval says otherwise); the \
      trip and token flags are then not used.

      --stream follows through the streaming trip feed (fleetconsumer.v1.TripFeed) where the \
      server offers it, falling back to polling where it does not.

      Retries: server and network errors are retried after the poll interval, growing 1.6x \
      per failure up to 12 poll intervals (at most 60 s, at least 1 s); client errors \
      (NOT_FOUND, PERMISSION_DENIED, ...) 4x as slowly; other errors after that maximum. \
      After a network error (UNAVAILABLE or DEADLINE_EXCEEDED noticed by the client: a \
      connection that dropped, could not be made or went silent) the follower keeps \
      connecting and polls, or reopens its --stream, as soon as a connection is ready again \
      (but not sooner than one poll interval after the error) instead of waiting out its \
      backoff. An error the server sent keeps its backoff, and a server's RetryInfo delay is \
      always waited out.

      Dead connections (a network path that drops packets without closing anything) are \
      found by HTTP/2 keepalive PINGs, sent while a call is open every --keepalive-interval \
      seconds and at once when a poll times out on a connection that has received nothing \
      for --keepalive-timeout: one unanswered for --keepalive-timeout seconds ends the \
      connection, prints an UNAVAILABLE error line and the next call goes to a new \
      connection. With the defaults (20 s, 10 s) a --stream follower reports a dead \
      connection within 30 s.

      Proxies: like gRPC's C-core, it connects through the HTTP CONNECT proxy of grpc_proxy, \
      https_proxy or http_proxy unless no_proxy exempts the endpoint; --proxy URL names one, \
      --no-proxy connects directly. TLS to Fleet Engine runs end to end through the tunnel. \
      The demo always connects directly.

      Logs: --log-level (default warning) writes what the service does to stderr, never to \
      stdout: at debug its connections, each call and each poll; at info failed updates. \
      No line carries a token or a key.
      """)

  @Option(
    help: ArgumentHelp(
      "Fleet Engine's address; leave it out to follow a demo trip on the embedded simulator.",
      valueName: "host:port"))
  var endpoint: String?

  @Flag(
    help: ArgumentHelp(
      "Connect without TLS (default: TLS, verified against the system's CAs); access "
        + "tokens then travel unencrypted."))
  var plaintext = false

  @Option(
    help: ArgumentHelp("The provider (Google Cloud project) ID; with --trip.", valueName: "id"))
  var provider: String?

  @Option(help: ArgumentHelp("The trip ID; with --provider.", valueName: "trip-id"))
  var trip: String?

  @Option(
    name: .customLong("trip-name"),
    help: ArgumentHelp("The trip as providers/<id>/trips/<id>.", valueName: "name"))
  var tripName: String?

  @Option(help: ArgumentHelp("A fixed access token.", valueName: "token"))
  var token: String?

  @Option(
    name: .customLong("token-command"),
    help: ArgumentHelp(
      "A command (run by /bin/sh -c, FLEET_TRIP_ID set) printing "
        + "{\"token\": ..., \"expiresAt\": <unix seconds>}.",
      valueName: "command"))
  var tokenCommand: String?

  @Option(
    name: .customLong("token-url"),
    help: ArgumentHelp(
      "A URL to GET {\"token\": ..., \"expiresAt\": <unix seconds>} from; {tripID} in it is "
        + "replaced by the trip ID.",
      valueName: "url"))
  var tokenURL: String?

  @Option(
    name: .customLong("service-account-key"),
    help: ArgumentHelp(
      "A Google service-account key (JSON) to mint each trip's consumer token from, in "
        + "process (RS256, valid an hour, renewed before it expires).",
      valueName: "file"))
  var serviceAccountKey: String?

  @Option(
    name: .customLong("poll-interval"),
    help: ArgumentHelp(
      "Seconds between polls, at least 0.1 (default 5; 1 for the demo).", valueName: "seconds"))
  var pollIntervalOption: Double?

  @Flag(help: "Follow through the streaming trip feed where the server offers it.")
  var stream = false

  @Option(
    name: .customLong("keepalive-interval"),
    help: ArgumentHelp(
      "Seconds between HTTP/2 keepalive PINGs while a call is open; 0 sends none.",
      valueName: "seconds"))
  var keepaliveInterval: Double = 20

  @Option(
    name: .customLong("keepalive-timeout"),
    help: ArgumentHelp(
      "Seconds a keepalive PING may go unanswered before the connection is given up for a new "
        + "one.",
      valueName: "seconds"))
  var keepaliveTimeout: Double = 10

  /// The poll interval in force: the flag, else 5 s (1 s against the embedded simulator).
  private var pollInterval: Double { pollIntervalOption ?? (endpoint == nil ? 1 : 5) }

  @Flag(help: "Print one JSON object per line on stdout, and nothing else there.")
  var json = false

  @OptionGroup(title: "Proxy") var proxy: ProxyOptions

  @OptionGroup(title: "Logging") var logging: LoggingOptions

  @Option(
    name: .customLong("max-seconds"),
    help: ArgumentHelp("Stop after this many seconds (exit status 0).", valueName: "seconds"))
  var maxSeconds: Double?

  func validate() throws {
    guard let endpoint else {
      // The demo brings its own trip and token.
      guard tripName == nil, provider == nil, trip == nil, token == nil, tokenCommand == nil,
        tokenURL == nil, serviceAccountKey == nil, !plaintext, proxy.url == nil
      else {
        throw ValidationError(
          "without --endpoint fleet-follow follows its own demo trip: give --endpoint to use "
            + "--trip-name, --provider/--trip, --plaintext, --proxy or a token")
      }
      try validateIntervals()
      return
    }
    do {
      _ = try TripService.Endpoint(endpoint)
    } catch {
      throw ValidationError("--endpoint: \(error.message)")
    }
    do {
      _ = try resolvedTripName()
    } catch let error as RPCError {
      // A malformed name is INVALID_ARGUMENT, as everywhere else: with --json it is also
      // the contract's error line, and nothing is sent.
      if json { Output.print(EventPrinter.errorLine(error, json: true)) }
      throw ValidationError(error.message)
    }
    let sources = [token != nil, tokenCommand != nil, tokenURL != nil, serviceAccountKey != nil]
      .filter { $0 }.count
    guard sources == 1 else {
      throw ValidationError(
        "give exactly one of --token, --token-command, --token-url, --service-account-key")
    }
    try validateIntervals()
    // A key that cannot be used is a usage error, found before anything is sent.
    _ = try tokenProvider()
  }

  private func validateIntervals() throws {
    if let token, token.isEmpty { throw ValidationError("--token is empty") }
    guard pollInterval.isFinite, pollInterval >= 0.1 else {
      throw ValidationError("--poll-interval must be at least 0.1 seconds")
    }
    if let maxSeconds, !(maxSeconds.isFinite && maxSeconds > 0) {
      throw ValidationError("--max-seconds must be a positive number of seconds")
    }
    guard keepaliveInterval.isFinite, keepaliveInterval >= 0 else {
      throw ValidationError(
        "--keepalive-interval must be 0 (no PINGs) or a positive number of seconds")
    }
    guard keepaliveTimeout.isFinite, keepaliveTimeout > 0 else {
      throw ValidationError("--keepalive-timeout must be a positive number of seconds")
    }
  }

  /// The trip name from `--trip-name` or `--provider` and `--trip`, checked: a usage error
  /// when the flags do not name one, an INVALID_ARGUMENT `RPCError` when the name is
  /// malformed.
  private func resolvedTripName() throws -> TripName {
    switch (tripName, provider, trip) {
    case (let name?, nil, nil):
      return try TripName(name)
    case (nil, let provider?, let trip?):
      return try TripName(providerID: provider, tripID: trip)
    case (nil, _, _):
      throw ValidationError("give --provider and --trip together, or --trip-name")
    case (.some, _, _):
      throw ValidationError("give either --trip-name or --provider with --trip, not both")
    }
  }

  func run() async throws {
    guard let endpointText = self.endpoint else { return try await runDemo() }
    let name = try resolvedTripName()
    let endpoint = try TripService.Endpoint(endpointText)
    try await follow(
      name, at: endpoint, plaintext: plaintext, proxy: proxy.proxy,
      tokenProvider: try tokenProvider())
  }

  /// The demo: the simulator in this process, one demo trip, followed to the end.
  private func runDemo() async throws {
    var simulatorOptions = SimulatorOptions()
    simulatorOptions.logger = logger(label: "fleet-follow.simulator")
    let simulator = try await FleetSimulator.start(
      host: "127.0.0.1", port: 0, options: simulatorOptions)
    let name = try TripName(try simulator.createDemoTrip(providerID: "demo-provider"))
    log("demo: the Fleet Engine simulator listens on \(simulator.endpoint); following \(name)")
    do {
      try await follow(
        name, at: try TripService.Endpoint(simulator.endpoint), plaintext: true, proxy: .none,
        tokenProvider: FixedAccessTokenProvider(AccessToken("demo-token")))
    } catch {
      await simulator.shutdown(gracePeriod: .seconds(1))
      throw error
    }
    await simulator.shutdown(gracePeriod: .seconds(1))
  }

  private func follow(
    _ name: TripName, at endpoint: TripService.Endpoint, plaintext: Bool,
    proxy: ChannelOptions.Proxy, tokenProvider: any AccessTokenProvider
  ) async throws {
    let logger = logger(label: "fleet-follow")
    var options = TripService.Options()
    options.interceptors = LoggingOptions.clientInterceptors(logger)
    options.followsTripFeed = stream
    options.proxy = proxy
    options.pollInterval = .seconds(pollInterval)
    do {
      options.keepalive =
        keepaliveInterval == 0
        ? nil
        : try TripService.Keepalive(
          interval: .seconds(keepaliveInterval), timeout: .seconds(keepaliveTimeout))
    } catch {
      log("error: \(error.message)")
      throw ExitCode.failure
    }
    // The contract has no retry flags: scale the backoff with the poll interval.
    options.retryPolicy = RetryPolicy(
      initialBackoff: .seconds(pollInterval),
      maximumBackoff: .seconds(min(60, max(1, 12 * pollInterval))))
    if plaintext {
      // Asking for plaintext is asking for the token to go unencrypted.
      options.allowsTokensOverPlaintext = true
      if !endpoint.isLoopback {
        log("warning: --plaintext to \(endpoint): the access token is sent unencrypted")
      }
    }
    let service: TripService
    do {
      service = try TripService(
        configuration: .init(
          endpoint: endpoint, transportSecurity: plaintext ? .plaintext : .tls(.init()),
          providerID: name.providerID, accessTokenProvider: tokenProvider, options: options,
          logger: logger))
    } catch {
      log("error: \(error.message)")
      throw ExitCode.failure
    }
    let model = try service.tripModel(forTripName: name.description)
    log("following \(name) at \(endpoint)" + (plaintext ? " (plaintext)" : ""))

    let json = self.json
    let maxSeconds = self.maxSeconds
    let ended = await withTaskGroup(of: String.self) { group in
      group.addTask {
        var printer = EventPrinter(json: json)
        for await event in model.updates {
          // The model's state is not part of stdout's contract.
          if case .stateChanged(let state) = event { log("model state: \(state)") }
          for line in printer.lines(for: event) { Output.print(line) }
        }
        return "the trip ended"
      }
      if let maxSeconds {
        group.addTask {
          try? await Task.sleep(for: .seconds(maxSeconds))
          return "--max-seconds \(maxSeconds) passed"
        }
      }
      let first = await group.next() ?? "nothing to do"
      group.cancelAll()
      return first
    }
    log("stopped: \(ended)")
    service.shutdown()
  }

  private func tokenProvider() throws -> any AccessTokenProvider {
    do {
      return try AccessTokenFlags.provider(
        token: token, tokenCommand: tokenCommand, tokenURL: tokenURL,
        serviceAccountKey: serviceAccountKey)
    } catch {
      throw ValidationError("--service-account-key: \(error.message)")
    }
  }

  /// A logger at `--log-level` (default warning), to stderr.
  private func logger(label: String) -> Logger {
    logging.logger(label: label, defaultLevel: .warning)
  }

  private func log(_ message: String) {
    FileHandle.standardError.write(Data("fleet-follow: \(message)\n".utf8))
  }
}

/// Writes whole lines to stdout, flushed at once, so a reader sees each event as it happens.
enum Output {
  static func print(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }
}
