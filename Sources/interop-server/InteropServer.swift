import ArgumentParser
import GRPCTestingServices
import FleetSync
import GRPCHealth
import GRPCReflection
import GRPCTestingProtos
import GRPCWire

#if canImport(Glibc)
  import Glibc
#endif

/// `grpc.testing.TestService` on our own server, as gRPC's interop-test-descriptions.md
/// prescribes for servers, so other implementations' clients can check it; with health
/// (SERVING for `""` and every service, NOT_SERVING once it stops) and server reflection.
///
/// Prints `LISTENING <port>` once it serves; SIGTERM or SIGINT end it.
@main
struct InteropServerCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "interop-server",
    abstract: "Serve grpc.testing.TestService with GRPCWire's server role.")

  @Option(name: .customLong("port"), help: "The port (0: one the OS picks).")
  var port = 0

  @Option(name: .customLong("host"), help: "The address to listen on.")
  var host = "127.0.0.1"

  @Flag(
    name: .customLong("unary-on-loop"),
    help: "Run the unary methods' handlers on the event loop, with no task per call.")
  var unaryOnLoop = false

  @Option(name: .customLong("tls-cert"), help: "Serve TLS with this PEM certificate chain.")
  var tlsCertificate: String?

  @Option(name: .customLong("tls-key"), help: "The PEM private key of --tls-cert.")
  var tlsKey: String?

  func validate() throws {
    guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
    guard (tlsCertificate == nil) == (tlsKey == nil) else {
      throw ValidationError("--tls-cert and --tls-key go together")
    }
  }

  func run() async throws {
    var options = ServerOptions()
    options.maxReceiveMessageSize = 32 << 20
    if let tlsCertificate, let tlsKey {
      options.tls = (certificateChainFile: tlsCertificate, privateKeyFile: tlsKey)
    }
    let server = GRPCServer(options: options)
    TestServiceHandlers.register(on: server, unaryOnLoop: unaryOnLoop)
    let health = HealthService()
    health.register(on: server)
    ReflectionService(files: ProtoFileDescriptor.grpcTestingProtos).register(on: server)
    health.setStatus(.serving, forServicesOf: server)
    // Catch SIGTERM/SIGINT before announcing the port: a signal right after it must not kill us.
    let shutdown = ShutdownSignals()
    let bound = try await server.start(host: host, port: port)
    print("LISTENING \(bound)")
    // Whoever started us reads this line from a pipe: do not leave it in stdout's buffer.
    fflush(nil)  // nil flushes every stream; naming `stdout` is not concurrency-safe in Swift 6
    await shutdown.wait(orParentExit: true)
    health.enterNotServing()
    await server.shutdown(gracePeriod: .seconds(1))
  }
}
