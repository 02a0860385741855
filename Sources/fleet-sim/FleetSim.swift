import ArgumentParser
import FleetSimulator

/// The Fleet Engine simulator as a gRPC server.
@main
struct FleetSim: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleet-sim", abstract: "Serve a simulated Fleet Engine TripService.")

  func run() async throws {}
}
