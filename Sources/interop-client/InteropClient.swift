import ArgumentParser
import GRPCWire

#if canImport(Glibc)
  import Glibc
#endif

/// The standard gRPC interop client: runs one test case against a `grpc.testing.TestService`
/// server and exits 0 when it passes, or non-zero with a one-line reason.
///
/// Flags are the ones interop runners use (`--server_port=8080 --use_tls=false`).
@main
struct InteropClient: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "interop-client",
    abstract: "Run a gRPC interop test case against a grpc.testing.TestService server.")

  @Option(name: .customLong("server_host"), help: "The server's host name or address.")
  var serverHost = "localhost"

  @Option(name: .customLong("server_port"), help: "The server's port.")
  var serverPort: Int

  @Option(name: .customLong("test_case"), help: "The case to run: \(InteropCase.allNames).")
  var testCase: String = "large_unary"

  @Option(name: .customLong("use_tls"), help: "Use TLS (true or false).")
  var useTLS = false

  @Option(
    name: .customLong("use_test_ca"),
    help: "Trust the test CA given by --ca_file instead of the system's CAs (with --use_tls).")
  var useTestCA = false

  @Option(name: .customLong("server_host_override"), help: "The host name TLS expects.")
  var serverHostOverride: String?

  @Option(name: .customLong("ca_file"), help: "A PEM file of CA certificates to trust.")
  var caFile: String?

  @Option(
    name: .customLong("soak_iterations"),
    help: "rpc_soak and channel_soak: the large_unary calls to make.")
  var soakIterations = 10

  @Option(
    name: .customLong("soak_max_failures"),
    help: "Soak iterations that may fail (an error, or slower than the latency below).")
  var soakMaxFailures = 0

  @Option(
    name: .customLong("soak_per_iteration_max_acceptable_latency_ms"),
    help: "A soak iteration slower than this many milliseconds fails.")
  var soakMaxLatencyMilliseconds = 1_000

  @Option(
    name: .customLong("soak_overall_timeout_seconds"),
    help: "A soak case fails unless all its iterations ran within this many seconds.")
  var soakOverallTimeoutSeconds = 10

  @Option(
    name: .customLong("soak_min_time_ms_between_rpcs"),
    help: "The least time in milliseconds from one soak iteration's start to the next's.")
  var soakMinMillisecondsBetweenRPCs = 0

  func validate() throws {
    guard soakIterations > 0 else {
      throw ValidationError("--soak_iterations must be at least 1, not \(soakIterations)")
    }
    guard soakMaxFailures >= 0, soakMaxLatencyMilliseconds >= 0, soakOverallTimeoutSeconds >= 0,
      soakMinMillisecondsBetweenRPCs >= 0
    else {
      throw ValidationError("the --soak_* values cannot be negative")
    }
    guard (1...65_535).contains(serverPort) else {
      throw ValidationError("--server_port must be 1...65535, not \(serverPort)")
    }
    guard InteropCase(rawValue: testCase) != nil else {
      throw ValidationError("unknown --test_case '\(testCase)'; known: \(InteropCase.allNames)")
    }
    if useTestCA && caFile == nil {
      throw ValidationError("--use_test_ca=true needs --ca_file: no test CA is built in")
    }
  }

  func run() async throws {
    var options = ChannelOptions()
    if useTLS {
      options.transportSecurity = .tls(
        TLSConfiguration(
          trustRoots: caFile.map { .pemFile($0) } ?? .system,
          serverHostnameOverride: serverHostOverride))
    }
    let channel = GRPCChannel(host: serverHost, port: serverPort, options: options)
    defer { channel.close() }
    let soak = SoakSettings(
      iterations: soakIterations, maxFailures: soakMaxFailures,
      maxAcceptableLatency: .milliseconds(soakMaxLatencyMilliseconds),
      overallTimeout: .seconds(soakOverallTimeoutSeconds),
      minTimeBetweenRPCs: .milliseconds(soakMinMillisecondsBetweenRPCs))
    do {
      try await InteropCase(rawValue: testCase)!.run(on: channel, soak: soak) {
        GRPCChannel(host: serverHost, port: serverPort, options: options)
      }
    } catch {
      print("\(testCase): FAILED: \(error)")
      throw ExitCode(1)
    }
    print("\(testCase): PASSED")
  }
}
