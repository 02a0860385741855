import ArgumentParser
import FleetSimulator
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix

/// `grpc-swift-sim`: the server side of the benchmarks built on grpc-swift 2, so the table can
/// show fleet-sim's CPU per call beside grpc-swift 2's server under the same client.
///
/// Its first line on stdout is `listening on HOST:PORT`, as fleet-sim's; SIGTERM or SIGINT
/// end it (the harness stops it by PID).
@main
struct GRPCSwiftSim: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "grpc-swift-sim",
    abstract: "Serve GetTrip and grpc.testing.BenchmarkService with grpc-swift 2 (plaintext).",
    discussion: """
      TripService/GetTrip answers from --trips trips (providers/<provider>/trips/trip-<n>) \
      that FleetSimulator creates at start and that are converted ONCE to SwiftProtobuf \
      messages: each call only looks a name up and serializes a ready message, which is \
      cheaper than fleet-sim's work (rendering the trip at the simulated time). Any \
      `authorization: Bearer <token>` is accepted; a call without one is UNAUTHENTICATED.

      grpc.testing.BenchmarkService: UnaryCall and StreamingCall answer each request with \
      a payload of its response_size; StreamingFromServer sends such responses until the \
      client cancels.
      """)

  @Option(help: "The address to listen on (IPv4).")
  var host = "127.0.0.1"

  @Option(help: "The port to listen on (0: one the OS picks; see the first line of output).")
  var port = 0

  @Option(help: "Create this many trips at start (providers/<provider>/trips/trip-<n>).")
  var trips = 100

  @Option(help: "The provider ID of the trips.")
  var provider = "sim-provider"

  @Option(
    help: ArgumentHelp(
      "Convert the trips as they are this many simulated seconds after their creation "
        + "(fleet-sim's --freeze-at); default: as they are at start.",
      valueName: "seconds"))
  var freezeAt: Double?

  func run() async throws {
    let tripService = try await TripService.make(
      trips: trips, providerID: provider,
      frozenAt: freezeAt.map { .milliseconds(Int64(($0 * 1000).rounded())) })
    let server = GRPCServer(
      transport: .http2NIOPosix(
        address: .ipv4(host: host, port: port), transportSecurity: .plaintext),
      services: [tripService, BenchmarkService()])
    try await withThrowingDiscardingTaskGroup { group in
      group.addTask { try await server.serve() }
      guard let address = try await server.listeningAddress?.ipv4 else {
        throw ValidationError("the server did not start listening on IPv4")
      }
      print("listening on \(address.host):\(address.port)")
      if let first = tripService.names.first, let last = tripService.names.last {
        print("created \(tripService.names.count) trips: \(first) ... \(last)")
      }
      fflush(nil)  // whoever started us reads these lines from a pipe
    }
  }
}
