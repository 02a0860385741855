import ArgumentParser
import FleetCommandLine
import FleetConsumer
import FleetProtos
import FleetSimulator
import FleetSync
import Foundation
import GRPCWire
import Logging

/// `fleet-load`: a gRPC load generator modelled on ghz, for Fleet Engine's TripService, our
/// trip feed, gRPC's benchmark services, and trips followed through `TripService`.
///
/// Exit status: 0 after printing the report (whatever the calls' statuses); 130 after a
/// partial report when SIGINT or SIGTERM cut the run short; 64 for bad flags; 1 when the
/// embedded simulator cannot start or the target lacks the trips. It always stops by
/// itself: after the count (`-n`) or the duration (`-z`) of the measured phase.
@main
struct FleetLoad: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleet-load",
    abstract: "Load a gRPC server and report rate, latency percentiles, status codes and cost.",
    discussion: """
      Workloads (--call; unit in brackets): GetTrip [rpc], WatchTrip [message], \
      grpc.testing.BenchmarkService/UnaryCall [rpc], .../StreamingCall [rpc: one ping-pong \
      round trip on a stream each worker keeps open], .../StreamingFromServer [message: each \
      worker opens one stream and counts what the server sends until the run stops], \
      grpc.testing.TestService/StreamingOutputCall [message: calls of --stream-messages \
      responses]. fleet-sim serves all of them. For messages the latency is the time since \
      the previous message of the stream (the first: since the call started).

      Load: -c calls in flight over --connections connections; closed loop (each worker \
      starts its next call when the last ends) or --rps (open loop, paced by a fixed clock, \
      latency from the scheduled time). After --warmup seconds (counted as warmupCount \
      only) it measures -n units or -z seconds, then prints count, duration, rate, a \
      latency histogram and percentiles (HdrHistogram), status codes, errors, CPU per unit, \
      peak RSS and this command line (--format json: one JSON object with the same figures).

      --trips N follows N trips through TripService/TripModel instead (see --trips).

      Target: without --target it starts the Fleet Engine simulator in this process (plaintext \
      loopback), creates --trips-to-create trips and loads it; the CPU figure then covers \
      client and server together. With --target it connects with TLS unless --plaintext. \
      Every call carries `authorization: Bearer load-test` unless -m gives another.

      Stopping: Ctrl-C or SIGTERM stops issuing calls, lets calls in flight finish for 1 s \
      (streams are cancelled at once), prints the report marked partial and exits 130. A \
      progress bar is drawn on stderr only when it is a terminal.

      Proxies: with --target it connects through the HTTP CONNECT proxy of grpc_proxy, \
      https_proxy or http_proxy unless no_proxy exempts the target (as gRPC's C-core does); \
      --proxy URL names one (its password is redacted in the report), --no-proxy connects \
      directly. The embedded simulator is always reached directly.

      Logs: --log-level (default warning) writes the channels' and the embedded simulator's \
      events to stderr: at debug connections and each call (which costs CPU per call: leave \
      it off for figures you keep). No line carries the -m values.
      """)

  /// The report's shape.
  enum Format: String, CaseIterable, ExpressibleByArgument {
    case text
    case json
  }

  @OptionGroup(title: "Target") var target: TargetOptions
  @OptionGroup(title: "Workload") var workload: WorkloadOptions
  @OptionGroup(title: "Load") var load: LoadOptions
  @OptionGroup(title: "Proxy") var proxy: ProxyOptions
  @OptionGroup(title: "Logging") var logging: LoggingOptions

  @Option(help: "The report: text or json.")
  var format = Format.text

  @Option(
    name: .customLong("histogram-svg"),
    help: ArgumentHelp("Also write the latency histogram as an SVG picture.", valueName: "file"))
  var histogramSVG: String?

  func validate() throws {
    if proxy.url != nil, target.target == nil {
      throw ValidationError("--proxy needs --target: the embedded simulator is reached directly")
    }
    let call = workload.workload
    if load.rps != nil, call.unit != .rpc {
      throw ValidationError(
        "--rps paces calls of the rpc workloads (GetTrip, UnaryCall, StreamingCall); "
          + "\(call.rawValue) counts messages the server sends at its own pace")
    }
    if !call.hasPayloads, workload.requestSize != 0 || workload.responseSize != 0 {
      throw ValidationError(
        "--request-size and --response-size set the grpc.testing payloads; \(call.rawValue) "
          + "sends and gets trips")
    }
    guard workload.trips != nil else {
      // Only the RPC workloads spread -c workers over the connections. With --trips, -c does
      // not apply, and --connections caps what TripService opens for all the followers.
      guard load.connections <= load.concurrency else {
        throw ValidationError(
          "--connections \(load.connections) is more than -c \(load.concurrency): a connection "
            + "without a worker would stay idle")
      }
      return
    }
    let conflicts = [
      ("--call", workload.callName != Workload.getTrip.rawValue),
      ("--rps", load.rps != nil),
      ("--executor", load.executor != .loop),
      ("--cert/--key", target.cert != nil),
      ("--request-size/--response-size", workload.requestSize != 0 || workload.responseSize != 0),
    ].filter(\.1).map(\.0)
    guard conflicts.isEmpty else {
      throw ValidationError(
        "--trips follows trips through TripService, which makes its own calls and "
          + "connections: \(conflicts.joined(separator: ", ")) cannot go with it")
    }
    for pair in load.metadataPairs where !pair.lowercased().hasPrefix("authorization=bearer ") {
      throw ValidationError(
        "with --trips only -m authorization=Bearer <token> applies (TripService sends its own "
          + "metadata), not \"\(pair)\"")
    }
  }

  func run() async throws {
    // Catch SIGINT/SIGTERM from the start: the run then ends with a partial report.
    let interruption = Interruption()
    let signals = ShutdownSignals()
    let watcher = Task {
      await signals.wait()
      interruption.signal()
    }
    defer { watcher.cancel() }

    let simulator: FleetSimulator?
    let host: String
    let port: Int
    let tripNames: [String]
    let tripCount = workload.tripsToCreate
    let needsTrips = workload.trips != nil || workload.workload.callsTrips
    if let address = target.hostAndPort {
      simulator = nil
      (host, port) = address
      tripNames = FleetSimulator.tripNames(count: tripCount, providerID: target.provider)
      if target.plaintext, !TripService.Endpoint(host: host, port: port).isLoopback {
        log("warning: --plaintext to \(host): the authorization metadata is sent unencrypted")
      }
    } else {
      var simulatorOptions = SimulatorOptions()
      simulatorOptions.logger = logger(label: "fleet-load.simulator")
      let started = try await FleetSimulator.start(
        host: "127.0.0.1", port: 0, options: simulatorOptions)
      simulator = started
      (host, port) = (started.host, started.port)
      tripNames =
        needsTrips
        ? try started.createTrips(count: tripCount, providerID: target.provider) : []
    }
    let targetDescription =
      simulator.map { "embedded simulator at \($0.endpoint)" }
      ?? "\(host):\(port)" + (target.usesTLS ? " (TLS)" : " (plaintext)")

    let report: LoadReport
    let histogram: LatencyRecorder.Tally
    if let trips = workload.trips {
      (report, histogram) = try await followTrips(
        trips, names: Array(tripNames.prefix(trips)), host: host, port: port,
        embedded: simulator != nil,
        interruption: interruption, targetDescription: targetDescription)
    } else {
      (report, histogram) = try await loadCalls(
        host: host, port: port, tripNames: tripNames, embedded: simulator != nil,
        interruption: interruption, targetDescription: targetDescription)
    }
    await simulator?.shutdown(gracePeriod: .seconds(1))

    print(format == .json ? report.json : report.text(histogram: histogram.histogram))
    fflush(nil)  // nil flushes every stream; naming `stdout` is not concurrency-safe in Swift 6
    if let histogramSVG {
      let title = "fleet-load \(report.call): \(report.count) \(report.unit)s, latency"
      let svg = HistogramSVG.render(histogram.histogram, title: title)
      do {
        try Data(svg.utf8).write(to: URL(fileURLWithPath: histogramSVG))
      } catch {
        log("error: cannot write --histogram-svg \(histogramSVG): \(error.localizedDescription)")
        throw ExitCode.failure
      }
    }
    if report.partial { throw ExitCode(130) }
  }

  // MARK: Raw calls

  private func loadCalls(
    host: String, port: Int, tripNames: [String], embedded: Bool, interruption: Interruption,
    targetDescription: String
  ) async throws -> (LoadReport, LatencyRecorder.Tally) {
    var channelOptions = ChannelOptions()
    channelOptions.transportSecurity = target.transportSecurity
    // Exactly one connection per channel, so --connections is what the server sees.
    channelOptions.maxConnections = 1
    if target.plaintext { channelOptions.allowInsecureCredentials = true }
    channelOptions.logger = logger(label: "fleet-load")
    channelOptions.proxy = embedded ? .none : proxy.proxy
    channelOptions.interceptors = LoggingOptions.clientInterceptors(channelOptions.logger)
    let loop = EventLoop(name: "fleet-load")
    let channels = (0..<load.connections).map { _ in
      GRPCChannel(host: host, port: port, options: channelOptions, eventLoop: loop)
    }
    defer { loop.shutdown() }
    let call = workload.workload
    let workers = LoadWorkers(
      channels: channels, options: CallOptions(metadata: load.metadata), tripNames: tripNames,
      concurrency: load.concurrency, requestSize: workload.requestSize,
      responseSize: workload.responseSize, streamMessages: workload.streamMessages)
    var probeCount = 0
    do {
      if call.callsTrips, !embedded {
        probeCount = try await Self.probe(channels[0], workers.options, tripNames)
      }
    } catch {
      for channel in channels { channel.close() }
      throw error
    }
    let runner = LoadRunner(
      workload: call, workers: workers, concurrency: load.concurrency,
      interruption: interruption, progress: ProgressBar.ifTerminal(unit: "\(call.unit.rawValue)s"),
      executor: load.executor == .loop ? loop : nil)

    var warmupCount = 0
    if load.warmup > 0 {
      let start = ContinuousClock.now
      let phase = LoadPhase(
        start: start, deadline: start + .milliseconds(Int64(load.warmup * 1000)), limit: nil,
        rate: load.rps)
      warmupCount = Int(await runner.run(phase, label: "warm-up").tally.histogram.totalCount)
    }
    var measured = LoadPhase.nothingMeasured(warmupCount: warmupCount)
    if !interruption.happened {
      let phase = LoadPhase(load.stop, rate: load.rps)
      measured.before = ProcessUsage.now()
      let outcome = await runner.run(phase, label: "measuring")
      measured.after = ProcessUsage.now()
      measured.tally = outcome.tally
      measured.elapsed = outcome.elapsed
      measured.partial = interruption.happened
    }
    for channel in channels { await channel.close(gracePeriod: .seconds(1)) }
    var report = LoadReport(
      command: Self.commandLine(), target: targetDescription, call: call.rawValue,
      unit: call.unit, concurrency: load.concurrency, connections: load.connections,
      rps: load.rps, embedded: embedded, measured: measured)
    report.executor = load.executor.rawValue
    report.probeCount = probeCount
    return (report, measured.tally)
  }

  /// One GetTrip of the first and the last trip, so that a target without those trips fails
  /// at once with advice rather than reporting a run of NOT_FOUND. (--trips reports
  /// NOT_FOUND as failed updates.)
  /// Returns the calls it made.
  private static func probe(_ channel: GRPCChannel, _ options: CallOptions, _ names: [String])
    async throws -> Int
  {
    var made = 0
    for name in [names[0], names[names.count - 1]] {
      made += 1
      var request = FleetEngine.GetTripRequest()
      request.name = name
      do {
        _ = try await channel.unary(FleetEngine.TripService.getTrip, request, options: options)
      } catch let error as RPCError where error.code == .notFound {
        log(
          "\(name) does not exist on the target: start it with `fleet-sim --trips N` and give "
            + "--trips-to-create N (and --provider if not sim-provider)")
        throw ExitCode.failure
      } catch {
        // Any other failure is the run's to measure and report.
        return made
      }
    }
    return made
  }

  // MARK: Following trips

  private func followTrips(
    _ count: Int, names: [String], host: String, port: Int, embedded: Bool,
    interruption: Interruption, targetDescription: String
  ) async throws -> (LoadReport, LatencyRecorder.Tally) {
    var options = TripService.Options()
    options.pollInterval = .milliseconds(Int64((workload.pollInterval * 1000).rounded()))
    options.followsTripFeed = workload.stream
    // --connections N with --trips: the most connections TripService may open (it opens
    // another only when the server's stream limit is reached: 10,000 feed streams need 10 or
    // more against fleet-sim's 1,000 per connection). Without it, TripService's default.
    if load.connections > 1 { options.maxConnections = load.connections }
    if let eventLoops = workload.eventLoops {
      options.eventLoops = eventLoops
      options.tripsPerEventLoop = 1
    }
    options.allowsTokensOverPlaintext = embedded || target.plaintext
    let logger = logger(label: "fleet-load")
    options.proxy = embedded ? .none : proxy.proxy
    options.interceptors = LoggingOptions.clientInterceptors(logger)
    let security: TripService.TransportSecurity =
      target.usesTLS
      ? .tls(
        .init(trustedCertificatesFile: target.cacert, serverHostnameOverride: target.serverName))
      : .plaintext
    var token = "load-test"
    for pair in load.metadataPairs {
      token = String(pair.dropFirst("authorization=Bearer ".count))
    }
    let configuration = TripService.Configuration(
      endpoint: TripService.Endpoint(host: host, port: port), transportSecurity: security,
      providerID: target.provider,
      accessTokenProvider: FixedAccessTokenProvider(AccessToken(token)),
      options: options, logger: logger)
    let stop: LoadOptions.Stop =
      load.total == nil && load.duration == nil ? .duration(.seconds(10)) : load.stop
    let run = TripLoad(
      configuration: configuration, names: names, warmup: load.warmup, stop: stop,
      interruption: interruption, progress: ProgressBar.ifTerminal(unit: "updates"))
    let result: TripLoad.Result
    do {
      result = try await run.run()
    } catch {
      Self.log("error: cannot follow the trips: \(error)")
      throw ExitCode.failure
    }
    var report = LoadReport(
      command: Self.commandLine(), target: targetDescription,
      call: workload.stream ? Workload.watchTrip.rawValue : Workload.getTrip.rawValue,
      unit: .update, concurrency: count, connections: result.connections, rps: nil,
      embedded: embedded,
      measured: result.measured)
    report.trips = result.trips
    return (report, result.measured.tally)
  }

  // MARK: Pieces

  /// This process's command line, credentials redacted, quoted for a POSIX shell where needed.
  private static func commandLine() -> String {
    let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,@+%")
    let arguments = CommandLineRedaction.redacted(Array(CommandLine.arguments.dropFirst()))
    return (["fleet-load"] + arguments).map { argument in
      guard argument.isEmpty || !argument.allSatisfy(safe.contains) else { return argument }
      return "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }.joined(separator: " ")
  }

  /// A logger at `--log-level` (default warning), to stderr.
  private func logger(label: String) -> Logger {
    logging.logger(label: label, defaultLevel: .warning)
  }

  private static func log(_ message: String) {
    FileHandle.standardError.write(Data("fleet-load: \(message)\n".utf8))
  }

  private func log(_ message: String) { Self.log(message) }
}
