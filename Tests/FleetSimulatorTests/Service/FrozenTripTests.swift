import GRPCWire
import Testing

@testable import FleetSimulator

/// `SimulatorOptions.frozenAt` (fleet-sim's `--freeze-at`): every trip holds still at one
/// moment of its timeline, so a benchmark's calls all get the same active trip.
@Suite("Simulator: a frozen trip holds still")
struct FrozenTripTests {
  /// A clock so fast that a trip is over within microseconds of real time, unless frozen.
  static let timeScale = 1e8

  @Test("frozen at 180 s a generated trip is ENROUTE_TO_PICKUP, and every GetTrip is the same")
  func holdsStill() async throws {
    var options = SimulatorOptions()
    options.timeScale = Self.timeScale
    options.frozenAt = .seconds(180)
    try await SimulatorHarness.with(options) { harness in
      let created = try await harness.createTrip()
      let first = try await harness.getTrip(created.name)
      #expect(first.tripStatus == .enrouteToPickup)
      #expect(!first.route.isEmpty, "an active trip has its route")
      #expect(first.vehicleID != "")
      for _ in 0..<3 {
        let again = try await harness.getTrip(created.name)
        #expect(again == first)
      }
    }
  }

  @Test("at the same time scale, unfrozen, the trip is already COMPLETE")
  func movesUnfrozen() async throws {
    var options = SimulatorOptions()
    options.timeScale = Self.timeScale
    try await SimulatorHarness.with(options) { harness in
      let created = try await harness.createTrip()
      let trip = try await harness.getTrip(created.name)
      #expect(trip.tripStatus == .complete)
    }
  }

  @Test("a negative frozen moment is refused")
  func negative() {
    var options = SimulatorOptions()
    options.frozenAt = .seconds(-1)
    #expect(options.problem == "the frozen moment must not be negative")
  }
}
