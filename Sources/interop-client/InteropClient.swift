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

  func validate() throws {
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
    do {
      try await InteropCase(rawValue: testCase)!.run(on: channel)
    } catch {
      print("\(testCase): FAILED: \(error)")
      throw ExitCode(1)
    }
    print("\(testCase): PASSED")
  }
}
