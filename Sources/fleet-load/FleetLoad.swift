import ArgumentParser
import FleetProtos
import FleetSimulator
import Foundation
import GRPCWire

/// `fleet-load`: a gRPC load generator for Fleet Engine's TripService, modelled on ghz.
///
/// Exit status: 0 after printing the report (whatever the calls' statuses); non-zero for bad
/// flags, or when the embedded simulator cannot start. It always stops by itself: after the
/// count (`-n`) or the duration (`-z`) of the measured phase.
@main
struct FleetLoad: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleet-load",
    abstract: "Load a gRPC server with GetTrip calls and report rate, latency and cost.",
    discussion: """
      Closed loop: -c calls are in flight; each worker starts its next call when the last \
      ends. After --warmup seconds (not measured) it measures -n calls or -z seconds, then \
      prints count, duration, rate, latency percentiles, status codes, errors, CPU per RPC, \
      peak RSS and this command line (--format json: one JSON object with the same fields).

      Without --target it starts the Fleet Engine simulator in this process, creates \
      --trips-to-create trips and loads it over loopback HTTP/2; the CPU figure then covers \
      client and server together. Every call carries `authorization: Bearer load-test`.
      """)

  /// The report's shape.
  enum Format: String, CaseIterable, ExpressibleByArgument {
    case text
    case json
  }

  @OptionGroup(title: "Target") var target: TargetOptions
  @OptionGroup(title: "Load") var load: LoadOptions

  @Option(help: "The report: text or json.")
  var format = Format.text

  func run() async throws {
    let simulator: FleetSimulator?
    let host: String
    let port: Int
    let tripNames: [String]
    if let address = target.hostAndPort {
      simulator = nil
      (host, port) = address
      tripNames = Self.tripNames(count: load.tripsToCreate, providerID: target.provider)
    } else {
      let started = try await FleetSimulator.start(host: "127.0.0.1", port: 0)
      simulator = started
      (host, port) = (started.host, started.port)
      tripNames = try started.createTrips(count: load.tripsToCreate, providerID: target.provider)
    }
    let channel = GRPCChannel(host: host, port: port)
    var metadata = Metadata()
    metadata.add("authorization", "Bearer load-test")
    let runner = LoadRunner(
      channel: channel, tripNames: tripNames, concurrency: load.concurrency,
      options: CallOptions(metadata: metadata))

    if simulator == nil { try await Self.probe(runner, tripNames) }

    let clock = ContinuousClock()
    if load.warmup > 0 {
      _ = await runner.run(
        count: nil, until: clock.now + .milliseconds(Int64(load.warmup * 1000)))
    }
    let before = ProcessUsage.now()
    let start = clock.now
    let samples: LoadRunner.Samples
    switch load.stop {
    case .count(let count): samples = await runner.run(count: count, until: nil)
    case .duration(let duration): samples = await runner.run(count: nil, until: start + duration)
    }
    let elapsed = clock.now - start
    let after = ProcessUsage.now()

    let report = LoadReport(
      command: Self.commandLine(),
      target: simulator.map { "embedded simulator at \($0.endpoint)" }
        ?? "\(host):\(port)",
      call: load.call.rawValue, concurrency: load.concurrency, samples: samples,
      elapsed: elapsed, before: before, after: after, embedded: simulator != nil)
    await channel.close(gracePeriod: .seconds(1))
    await simulator?.shutdown(gracePeriod: .seconds(1))
    print(format == .json ? report.json : report.text)
  }

  /// One GetTrip of the first and the last trip, so that a target without those trips fails
  /// at once with advice rather than reporting a run of NOT_FOUND.
  private static func probe(_ runner: LoadRunner, _ tripNames: [String]) async throws {
    for name in [tripNames[0], tripNames[tripNames.count - 1]] {
      var request = FleetEngine.GetTripRequest()
      request.name = name
      do {
        _ = try await runner.channel.unary(
          FleetEngine.TripService.getTrip, request, options: runner.options)
      } catch let error as RPCError where error.code == .notFound {
        FileHandle.standardError.write(
          Data(
            ("fleet-load: \(name) does not exist on the target: start it with "
              + "`fleet-sim --trips N` and give --trips-to-create N (and --provider if not "
              + "sim-provider)\n").utf8))
        throw ExitCode.failure
      }
    }
  }

  /// The names `FleetSimulator.createTrips(count:providerID:)` gives, for a remote target.
  private static func tripNames(count: Int, providerID: String) -> [String] {
    let width = String(count).count
    return (1...count).map { number in
      let digits = String(number)
      return "providers/\(providerID)/trips/trip-"
        + String(repeating: "0", count: width - digits.count) + digits
    }
  }

  /// This process's command line, quoted for a POSIX shell where needed.
  private static func commandLine() -> String {
    let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,@+%")
    return (["fleet-load"] + CommandLine.arguments.dropFirst()).map { argument in
      guard argument.isEmpty || !argument.allSatisfy(safe.contains) else { return argument }
      return "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }.joined(separator: " ")
  }
}
