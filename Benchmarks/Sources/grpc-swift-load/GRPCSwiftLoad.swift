import ArgumentParser
import BenchmarkProtos
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix

/// `grpc-swift-load`: fleet-load's workloads on a grpc-swift 2 client, with the same flags
/// (the subset below) and the same JSON report keys, so `Benchmarks/run` can put both side by
/// side.
///
/// The client is what a grpc-swift 2 user writes: one `GRPCClient` over
/// `HTTP2ClientTransport.Posix` (one HTTP/2 connection, plaintext, the transport's default
/// configuration on NIO's singleton event-loop group) and the generated SwiftProtobuf stubs.
/// Started from main.swift.
struct GRPCSwiftLoad: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "grpc-swift-load",
    abstract: "Load a gRPC server through grpc-swift 2 and report rate, latency and cost.",
    discussion: """
      Closed loop: -c workers each keep one call (or one stream) going. The first --warmup \
      seconds are not measured; then -n units or -z seconds are. A unit is, as fleet-load \
      counts it, one RPC (GetTrip, UnaryCall), one request/response round trip \
      (StreamingCall) or one received message (StreamingFromServer, StreamingOutputCall). \
      CPU is getrusage (user+sys) of this process over the measured phase. Every call \
      carries `authorization: Bearer load-test`.
      """)

  enum Format: String, ExpressibleByArgument {
    case text
    case json
  }

  @Option(help: ArgumentHelp("The server, plaintext.", valueName: "host:port"))
  var target: String

  @Option(help: ArgumentHelp("The workload: \(Workload.names).", valueName: "name"))
  var call = Workload.getTrip.rawValue

  @Option(
    name: [.customShort("c"), .customLong("concurrency")], help: "Workers (calls in flight).")
  var concurrency = 50

  @Option(
    name: [.customShort("n"), .customLong("total")], help: "Units to measure (default 10000).")
  var total: Int?

  @Option(name: [.customShort("z"), .customLong("duration")], help: "Seconds to measure.")
  var duration: Double?

  @Option(help: "Seconds of load before measuring; excluded from every figure.")
  var warmup = 1.0

  @Option(help: "Payload bytes of each grpc.testing request.")
  var requestSize = 0

  @Option(help: "Payload bytes the grpc.testing server is asked to send in each response.")
  var responseSize = 0

  @Option(help: "Responses asked for in each StreamingOutputCall.")
  var streamMessages = 100

  @Option(help: "GetTrip names go round-robin over the trips `fleet-sim --trips N` makes.")
  var tripsToCreate = 100

  @Option(help: "The provider of those trips.")
  var provider = "sim-provider"

  @Flag(help: "Accepted for fleet-load compatibility; this client only speaks plaintext.")
  var plaintext = false

  @Flag(
    help: """
      Run Swift concurrency on NIO's event loops (NIOSingletons' global-executor take-over), \
      which saves a thread hop per call; installed in main.swift before any task runs.
      """)
  var nioExecutor = false

  @Option(help: "The report: text or json.")
  var format = Format.text

  var workload: Workload { Workload(rawValue: call)! }

  func validate() throws {
    guard Workload(rawValue: call) != nil else {
      throw ValidationError("--call \(call) is not supported; supported: \(Workload.names)")
    }
    guard Self.split(target) != nil else { throw ValidationError("--target must be HOST:PORT") }
    guard concurrency >= 1 else { throw ValidationError("-c must be at least 1") }
    if total != nil, duration != nil { throw ValidationError("give -n or -z, not both") }
    if let total, total < 1 { throw ValidationError("-n must be at least 1") }
    if let duration, !(duration > 0) { throw ValidationError("-z must be positive") }
    guard warmup >= 0 else { throw ValidationError("--warmup must not be negative") }
    guard tripsToCreate >= 1 else { throw ValidationError("--trips-to-create must be >= 1") }
  }

  func run() async throws { try await load() }

  /// The run itself; main.swift calls it by this name, as a bare `run()` there resolves to
  /// ParsableCommand's synchronous default (which prints the help).
  func load() async throws {
    let (host, port) = Self.split(target)!
    let transport = try HTTP2ClientTransport.Posix(
      target: .ipv4(address: host, port: port), transportSecurity: .plaintext)
    let phases = LoadPhases(measuredLimit: duration == nil ? (total ?? 10_000) : nil)
    let context = WorkloadContext(
      workload: workload, tripNames: Self.tripNames(count: tripsToCreate, providerID: provider),
      requestSize: requestSize, responseSize: responseSize, streamMessages: streamMessages,
      phases: phases)

    let results = try await withGRPCClient(transport: transport) { client in
      // One call first, so connecting is neither warm-up nor measured.
      try await context.probe(client)
      return try await withThrowingTaskGroup(of: WorkerResult.self) { group in
        for worker in 0..<concurrency {
          group.addTask { try await context.runWorker(worker, client: client) }
        }
        group.addTask {
          try await Task.sleep(for: .milliseconds(Int64(warmup * 1000)))
          phases.startMeasuring()
          if let duration {
            try await Task.sleep(for: .milliseconds(Int64(duration * 1000)))
            phases.stop()
          }
          return WorkerResult()
        }
        var all = WorkerResult()
        for try await result in group { all.merge(result) }
        return all
      }
    }
    let (start, end) = phases.boundaries
    let report = LoadReport(
      command: Self.commandLine(), target: target, call: call, unit: workload.unit,
      concurrency: concurrency, results: results, start: start, end: end)
    print(format == .json ? report.json : report.text)
  }

  /// The names `fleet-sim --trips N` creates (FleetSimulator.createTrips): n from 1, zero
  /// padded to the width of N. Copied from fleet-load's rule.
  static func tripNames(count: Int, providerID: String) -> [String] {
    let width = String(count).count
    return (1...count).map { number in
      let digits = String(number)
      return "providers/\(providerID)/trips/trip-"
        + String(repeating: "0", count: width - digits.count) + digits
    }
  }

  static func split(_ text: String) -> (String, Int)? {
    guard let colon = text.lastIndex(of: ":"),
      let port = Int(text[text.index(after: colon)...]), (1...65_535).contains(port)
    else { return nil }
    let host = String(text[..<colon])
    return host.isEmpty ? nil : (host, port)
  }

  static func commandLine() -> String {
    (["grpc-swift-load"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
  }
}
