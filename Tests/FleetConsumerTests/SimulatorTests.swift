import FleetConsumer
import Foundation
import PeerSupport
import Testing

/// FleetConsumer against the other implementation of the trip API in this package: the
/// simulator (`fleet-sim`), whose vehicles drive their trips to COMPLETE on their own.
@Suite("Following trips on fleet-sim")
struct SimulatorTests {
  @Test("fleet-follow --json follows a simulated trip through every status to COMPLETE")
  func fleetFollow() async throws {
    let simulator = try await PeerServer.startFleetSim(["--trips", "1", "--time-scale", "600"])
    defer { simulator.kill() }
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

  @Test("following by polling and by stream prints identical event sequences (stepped clock)")
  func pollingAndStreamAgree() async throws {
    // The simulator's world moves in 1 s steps: a poller (every 0.2 s) and the stream (every
    // 0.5 s at most) both look more often than that, so both must see exactly the same states.
    let simulator = try await PeerServer.startFleetSim(["--trips", "1", "--clock-step", "1"])
    defer { simulator.kill() }
    let common = [
      "--endpoint", "127.0.0.1:\(simulator.port)", "--plaintext",
      "--trip-name", "providers/sim-provider/trips/trip-1", "--token", "t",
      "--poll-interval", "0.2", "--json", "--max-seconds", "60",
    ]
    async let polled = FleetFollowProcess.run(common, timeout: .seconds(90))
    async let streamed = FleetFollowProcess.run(common + ["--stream"], timeout: .seconds(90))
    let (polling, stream) = try await (polled, streamed)
    #expect(polling.status == 0 && stream.status == 0, "\(polling)\n\(stream)")
    let statuses = try polling.objects().filter { $0["event"] as? String == "tripStatus" }
      .compactMap { $0["status"] as? String }
    #expect(
      statuses == ["NEW", "ENROUTE_TO_PICKUP", "ARRIVED_AT_PICKUP", "ENROUTE_TO_DROPOFF", "COMPLETE"],
      "\(polling)")
    #expect(polling.lines.count > 20)
    #expect(polling.lines == stream.lines, "polling:\n\(polling.stdout)\nstream:\n\(stream.stdout)")
  }

  @Test("a model follows a simulated trip through the streaming feed, with no error")
  func feed() async throws {
    let simulator = try await PeerServer.startFleetSim(["--trips", "1", "--time-scale", "600"])
    defer { simulator.kill() }
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
