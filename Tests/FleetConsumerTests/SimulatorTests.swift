import FleetConsumer
import Foundation
import Testing

/// FleetConsumer against the other implementation of the trip API in this package: the
/// simulator (`fleet-sim`), whose vehicles drive their trips to COMPLETE on their own.
@Suite("Following trips on fleet-sim")
struct SimulatorTests {
  @Test("fleet-follow --json follows a simulated trip through every status to COMPLETE")
  func fleetFollow() async throws {
    let simulator = try await SimulatorProcess.start(["--trips", "1", "--time-scale", "600"])
    defer { simulator.stop() }
    let result = try await FleetFollowProcess.run([
      "--endpoint", "127.0.0.1:\(simulator.port)", "--plaintext",
      "--trip-name", "providers/sim-provider/trips/trip-1", "--token", "sim:trip-1",
      "--poll-interval", "0.1", "--json", "--max-seconds", "30",
    ])
    #expect(result.status == 0, "\(result)")
    let statuses = try result.objects().filter { $0["event"] as? String == "tripStatus" }
      .compactMap { $0["status"] as? String }
    #expect(statuses.last == "COMPLETE", "\(result)")
    #expect(try result.eventNames().contains("vehicleLocation"))
  }

  @Test("a model follows a simulated trip through the streaming feed, with no error")
  func feed() async throws {
    let simulator = try await SimulatorProcess.start(["--trips", "1", "--time-scale", "600"])
    defer { simulator.stop() }
    var options = TripService.Options()
    options.followsTripFeed = true
    options.pollInterval = .milliseconds(100)
    let service = try TripService(
      configuration: .init(
        endpoint: .init(host: "127.0.0.1", port: simulator.port), transportSecurity: .plaintext,
        providerID: "sim-provider",
        accessTokenProvider: FixedAccessTokenProvider(AccessToken("sim:trip-1")),
        options: options))
    let model = try service.tripModel(forTripName: "providers/sim-provider/trips/trip-1")
    var statuses: [FleetEngine.TripStatus] = []
    var errors: [RPCError] = []
    for await event in model.updates {
      if case .tripStatus(let status) = event { statuses.append(status) }
      if case .updateFailed(let error) = event { errors.append(error) }
    }
    #expect(statuses.last == .complete)
    #expect(errors.isEmpty, "\(errors)")
    #expect(model.currentTrip?.tripStatus == .complete)
  }
}
