import PeerSupport
import Testing

/// `fleet-sim` as grpcio's health-checking and reflection clients see it
/// (Tests/Python/health_reflection_client.py).
@Suite("fleet-sim health and reflection, by grpcio's clients", .timeLimit(.minutes(2)))
struct HealthReflectionPeerTests {
  @Test("grpcio: health SERVING, NOT_FOUND; reflection builds GetTrip; NOT_SERVING on SIGTERM")
  func grpcioClients() async throws {
    let sim = try await FleetSimProcess.start(["--trips", "1", "--time-scale", "1"])
    let port = try #require(sim.port, "\(sim.lines)")
    let result = try await HealthReflectionPeer.run(
      port: port, call: .getTrip("providers/sim-provider/trips/trip-1"),
      serving: ["maps.fleetengine.v1.TripService", "fleetconsumer.v1.TripFeed"],
      stopping: sim.pid)
    #expect(result.passed, "\(result.output.transcript)\n--- fleet-sim stderr ---\n\(sim.stderr)")
    for check in [
      "health.check.serving[maps.fleetengine.v1.TripService]",
      "health.check.unknown_is_not_found", "health.watch.unknown_is_service_unknown",
      "v1alpha.get_trip", "v1.get_trip",
      "health.watch.not_serving_on_shutdown[maps.fleetengine.v1.TripService]",
    ] {
      #expect(result.checks.contains(check), "\(check) did not pass: \(result.output.transcript)")
    }
    #expect(try await sim.waitForExit(timeout: .seconds(10)) == .exited(0), "stderr: \(sim.stderr)")
  }
}
