import Foundation
import GRPCWire
import Testing

@testable import FleetSimulator

/// Thousands of trips at once: what each costs in memory, and that they are all alive.
@Suite("Scale")
struct ScaleTests {
  /// Resident memory of this process in bytes (/proc/self/statm, second field, in pages).
  static func residentBytes() throws -> Int {
    let statm = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
    let pages = try #require(Int(statm.split(separator: " ")[1]))
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  }

  @Test("10,000 trips in progress: memory per trip, and every sampled one served over gRPC")
  func tenThousandTrips() async throws {
    var options = SimulatorOptions()
    options.timeScale = 1  // a trip takes about 12 minutes: all stay in progress
    try await SimulatorHarness.with(options) { sim in
      // Warm up the allocator and the code paths first, so they do not count.
      _ = try sim.simulator.createTrips(count: 200, providerID: "warm-up")
      let before = try Self.residentBytes()
      let started = ContinuousClock.now
      let names = try sim.simulator.createTrips(count: 10_000, providerID: "scale")
      let creation = ContinuousClock.now - started
      let after = try Self.residentBytes()
      let perTrip = Double(after - before) / 10_000
      let records = names.compactMap { sim.simulator.core.store.record(named: $0) }
      let planBytes = Double(records.reduce(0) { $0 + $1.storageBytes }) / 10_000
      let points = Double(records.reduce(0) { $0 + $1.plan.route.count }) / 10_000
      print(
        "[scale] 10,000 trips created in \(creation); resident memory +\((after - before) >> 10) KiB "
          + "= \(Int(perTrip)) bytes per trip (route arrays \(Int(planBytes)) bytes, "
          + "\(Int(points)) route points per trip)")
      #expect(sim.simulator.tripCount == 10_200)
      #expect(perTrip < 4_096, "memory per trip: \(perTrip) bytes")
      #expect(creation < .seconds(10))

      // Every 20th trip, over the wire from 8 tasks: all in progress, each with a route.
      let sample = stride(from: 0, to: names.count, by: 20).map { names[$0] }
      let served = ContinuousClock.now
      let statuses = try await withThrowingTaskGroup(of: [FleetEngine.TripStatus].self) { group in
        for part in 0..<8 {
          group.addTask {
            var statuses: [FleetEngine.TripStatus] = []
            for name in sample[(sample.count * part / 8)..<(sample.count * (part + 1) / 8)] {
              let trip = try await sim.getTrip(name)
              #expect(!trip.route.isEmpty && trip.remainingDistanceMeters != nil)
              statuses.append(trip.tripStatus)
            }
            return statuses
          }
        }
        var all: [FleetEngine.TripStatus] = []
        for try await part in group { all += part }
        return all
      }
      print("[scale] \(sample.count) GetTrip calls in \(ContinuousClock.now - served)")
      #expect(statuses.count == 500)
      #expect(statuses.allSatisfy { $0 == .new || $0 == .enrouteToPickup })

      // The last trip's vehicle finds it.
      let last = try #require(sim.simulator.trip(named: names[9_999]))
      var search = FleetEngine.SearchTripsRequest()
      search.parent = "providers/scale"
      search.vehicleID = last.vehicleID
      let found = try await sim.channel.unary(
        FleetEngine.TripService.searchTrips, search, options: SimulatorHarness.call()
      ).message
      #expect(found.trips.map(\.name) == [names[9_999]])
    }
  }

  @Test("10,000 trips created through CreateTrip calls from 16 tasks, all in progress")
  func createOverTheWire() async throws {
    var options = SimulatorOptions()
    options.timeScale = 1
    try await SimulatorHarness.with(options) { sim in
      let started = ContinuousClock.now
      try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<16 {
          group.addTask {
            for index in 0..<625 {
              let trip = try await sim.createTrip("w\(worker)-\(index)", provider: "wire")
              #expect(trip.tripStatus == .new)
            }
          }
        }
        try await group.waitForAll()
      }
      print("[scale] 10,000 CreateTrip calls in \(ContinuousClock.now - started)")
      #expect(sim.simulator.tripCount == 10_000)
      let names = (0..<16).flatMap { worker in
        (0..<625).map { "providers/wire/trips/w\(worker)-\($0)" }
      }
      #expect(
        names.allSatisfy { sim.simulator.trip(named: $0).map { !$0.tripStatus.isEnded } ?? false })
    }
  }
}

extension FleetEngine.TripStatus {
  /// COMPLETE or CANCELED.
  var isEnded: Bool { self == .complete || self == .canceled }
}
