import GRPCWire
import Testing

@testable import FleetSimulator

@Suite("SearchTrips")
struct SearchTests {
  func search(
    _ sim: SimulatorHarness, vehicle: String, provider: String = SimulatorHarness.provider,
    _ configure: (inout FleetEngine.SearchTripsRequest) -> Void = { _ in }
  ) async throws -> FleetEngine.SearchTripsResponse {
    var request = FleetEngine.SearchTripsRequest()
    request.parent = "providers/\(provider)"
    request.vehicleID = vehicle
    configure(&request)
    return try await sim.channel.unary(
      FleetEngine.TripService.searchTrips, request, options: SimulatorHarness.call()
    ).message
  }

  @Test("the vehicle a trip was given finds the trip, and only it")
  func byAssignedVehicle() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      let a = try await sim.createTrip()
      let b = try await sim.createTrip()
      #expect(a.vehicleID != b.vehicleID)
      let found = try await search(sim, vehicle: a.vehicleID)
      #expect(found.trips.map(\.name) == [a.name])
      #expect(found.trips.first?.vehicleID == a.vehicleID && found.nextPageToken.isEmpty)
      #expect(try await search(sim, vehicle: "no-such-vehicle").trips.isEmpty)
      #expect(try await search(sim, vehicle: a.vehicleID, provider: "other").trips.isEmpty)
    }
  }

  @Test("a vehicle named at creation serves several trips; pages and active-only filter work")
  func pagesAndActive() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      var trip = FleetEngine.Trip()
      trip.vehicleID = "shared-car"
      var names: [String] = []
      for index in 0..<5 { names.append(try await sim.createTrip("shared-\(index)", trip).name) }
      var collected: [String] = []
      var token = ""
      repeat {
        let page = try await search(sim, vehicle: "shared-car") {
          $0.pageSize = 2
          $0.pageToken = token
        }
        #expect(page.trips.count <= 2)
        collected += page.trips.map(\.name)
        token = page.nextPageToken
      } while !token.isEmpty
      #expect(collected == names)

      try await sim.cancelTrip(names[0])
      let active = try await search(sim, vehicle: "shared-car") { $0.activeTripsOnly = true }
      #expect(active.trips.map(\.name) == Array(names.dropFirst()))
    }
  }

  @Test("SearchTrips needs a vehicle and a well-formed parent and page token")
  func invalid() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      for (vehicle, configure) in [
        ("", { (_: inout FleetEngine.SearchTripsRequest) in }),
        ("v", { $0.parent = "provider/x" }),
        ("v", { $0.pageToken = "next please" }),
      ] as [(String, (inout FleetEngine.SearchTripsRequest) -> Void)] {
        let error = await #expect(throws: RPCError.self) {
          try await search(sim, vehicle: vehicle, configure)
        }
        #expect(error?.code == .invalidArgument)
      }
    }
  }
}
