import GRPCWire
import Testing

@testable import FleetSimulator

/// Two SHARED trips on one vehicle, over the wire: each trip's waypoints interleave both
/// riders' stops, each named by its trip, as Google's guide on retrieving trips directly
/// warns a consumer.
@Suite("Shared rides")
struct SharedRideTests {
  /// A SHARED trip on vehicle `vehicleID` with `passengers`, at `points` (pickup, drop-off)
  /// or generated ones.
  func shared(
    _ vehicleID: String, passengers: Int32,
    points: (FleetEngine.TerminalLocation, FleetEngine.TerminalLocation)? = nil
  ) -> FleetEngine.Trip {
    var trip = FleetEngine.Trip()
    trip.tripType = .shared
    trip.vehicleID = vehicleID
    trip.numberOfPassengers = passengers
    if let points {
      trip.pickupPoint = points.0
      trip.dropoffPoint = points.1
    }
    return trip
  }

  func tripID(_ name: String) -> String { String(name.split(separator: "/").last!) }

  @Test("two SHARED trips on one vehicle: interleaved waypoints by trip ID, to both ends")
  func rideTogether() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 300)) { sim in
      let first = try await sim.createTrip(
        SimulatorHarness.uniqueTripID("first"),
        shared("pool-1", passengers: 1, points: (terminal(52.52, 13.405), terminal(52.527, 13.415)))
      )
      let second = try await sim.createTrip(
        SimulatorHarness.uniqueTripID("second"), shared("pool-1", passengers: 2))
      let (a, b) = (tripID(first.name), tripID(second.name))
      #expect(second.vehicleID == "pool-1" && second.tripType == .shared)
      #expect(second.remainingWaypoints.map(\.tripID) == [a, b, a, b])
      #expect(
        second.remainingWaypoints.map(\.waypointType) == [
          .pickupWaypointType, .pickupWaypointType, .dropOffWaypointType, .dropOffWaypointType,
        ])
      #expect(second.vehicleWaypoints.map(\.tripID) == [a, b, a, b])

      let tripA = try await sim.getTrip(first.name)
      let tripB = try await sim.getTrip(second.name)
      #expect(tripA.remainingWaypoints.map(\.tripID) == [a, b, a])
      #expect(tripB.remainingWaypoints.map(\.tripID) == [a, b, a, b])
      #expect(tripA.numberOfPassengers == 1 && tripB.numberOfPassengers == 2)
      // The vehicle's next stop is first for both: a's pickup.
      #expect(tripA.etaToFirstWaypoint == tripB.etaToFirstWaypoint)
      // Not subscripted: a list shorter than expected fails the check above, not the run.
      #expect(tripB.etaToFirstWaypoint == tripB.remainingWaypoints.first?.eta)
      #expect(tripB.pickupPoint == tripB.remainingWaypoints.dropFirst().first?.location)
      #expect(try await sim.tripNames(ofVehicle: "pool-1") == [first.name, second.name].sorted())

      // Two riders is all a vehicle seats.
      let third = await #expect(throws: RPCError.self) {
        try await sim.createTrip(SimulatorHarness.uniqueTripID(), shared("pool-1", passengers: 1))
      }
      #expect(third?.code == .failedPrecondition && third?.errorInfo?.reason == "VEHICLE_FULL")

      async let streamA = sim.watchToEnd(first.name)
      let tripsB = try await sim.watchToEnd(second.name).compactMap(\.trip)
      let tripsA = try await streamA.compactMap(\.trip)
      let lifecycle: [FleetEngine.TripStatus] = [
        .enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff, .complete,
      ]
      #expect(Array(changes(tripsA.map(\.tripStatus)).drop { $0 == .new }) == lifecycle)
      #expect(Array(changes(tripsB.map(\.tripStatus)).drop { $0 == .new }) == lifecycle)
      #expect(changes(tripsA.map(\.remainingWaypoints).map { $0.map(\.tripID) }).contains([b, a]))
      // While the vehicle waits at b's pickup, a's drop-off is b's next waypoint.
      let waiting = try #require(tripsB.first { $0.tripStatus == .arrivedAtPickup })
      #expect(waiting.remainingWaypoints.map(\.tripID) == [a, b])
      #expect(waiting.etaToFirstWaypoint == waiting.remainingWaypoints.first?.eta)
      #expect(tripsA.last!.dropoffTime!.date < tripsB.last!.dropoffTime!.date)
      #expect(tripsB.last?.lastLocation?.location == tripsB.last?.dropoffPoint?.point)
    }
  }

  @Test("a rider who leaves — canceled or reassigned — takes their stops out of the other's trip")
  func riderLeaves() async throws {
    try await SimulatorHarness.with(VersionTests.standingStill) { sim in
      let first = try await sim.createTrip(
        SimulatorHarness.uniqueTripID(), shared("pool-2", passengers: 1))
      let second = try await sim.createTrip(
        SimulatorHarness.uniqueTripID(), shared("pool-2", passengers: 1))
      let b = tripID(second.name)
      let standing = try await sim.getTrip(second.name)
      try await sim.cancelTrip(first.name)
      let alone = try await sim.getTrip(second.name)
      #expect(alone.remainingWaypoints.map(\.tripID) == [b, b])
      #expect(
        alone.tripStatus == .new && alone.lastLocation?.location == standing.lastLocation?.location)
      #expect(alone.remainingWaypointsVersion!.date > standing.remainingWaypointsVersion!.date)

      let third = try await sim.createTrip(
        SimulatorHarness.uniqueTripID(), shared("pool-3", passengers: 1))
      let fourth = try await sim.createTrip(
        SimulatorHarness.uniqueTripID(), shared("pool-3", passengers: 1))
      var trip = FleetEngine.Trip()
      trip.vehicleID = "car-x"
      let moved = try await sim.updateTrip(fourth.name, paths: ["vehicle_id"], trip)
      #expect(moved.remainingWaypoints.map(\.tripID) == [tripID(fourth.name), tripID(fourth.name)])
      #expect(moved.vehicleID == "car-x")
      let left = try await sim.getTrip(third.name)
      #expect(left.remainingWaypoints.map(\.tripID) == [tripID(third.name), tripID(third.name)])
      #expect(left.vehicleID == "pool-3")
      // With one rider gone, the vehicle seats another.
      let fifth = try await sim.createTrip(
        SimulatorHarness.uniqueTripID(), shared("pool-3", passengers: 1))
      #expect(
        Set(fifth.remainingWaypoints.map(\.tripID)) == [tripID(third.name), tripID(fifth.name)])
    }
  }

  @Test("made up in process: demo pairs, and --trips kinds shared and mixed")
  func madeUp() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      let simulator = sim.simulator
      let pair = try simulator.createSharedDemoTrips(providerID: SimulatorHarness.provider)
      #expect(pair.map(tripID) == ["demo-1", "demo-2"])
      let a = try await sim.getTrip(pair[0])
      let b = try await sim.getTrip(pair[1])
      #expect(a.remainingWaypoints.map(\.tripID) == ["demo-1", "demo-2", "demo-1"])
      #expect(b.remainingWaypoints.map(\.tripID) == ["demo-1", "demo-2", "demo-1", "demo-2"])
      #expect(a.vehicleID == b.vehicleID && a.tripType == .shared && b.tripType == .shared)
      #expect(a.numberOfPassengers == 1 && b.numberOfPassengers == 2)

      let shared = try simulator.createTrips(count: 5, providerID: "kinds", kind: .shared)
      let vehicles = shared.map { simulator.trip(named: $0)!.vehicleID }
      #expect(vehicles[0] == vehicles[1] && vehicles[2] == vehicles[3])
      #expect(Set(vehicles).count == 3, "\(vehicles)")
      #expect(simulator.trip(named: shared[4])?.remainingWaypoints.count == 2)

      let mixed = try simulator.createTrips(
        count: 10, providerID: "mixed", tripIDPrefix: "m-", kind: .mixed)
      let trips = mixed.map { simulator.trip(named: $0)! }
      #expect(trips.map(\.intermediateDestinations.count) == [0, 3, 0, 0, 0, 0, 3, 0, 0, 0])
      #expect(trips.map(\.tripType) == [.exclusive, .exclusive, .exclusive, .shared, .shared] * 2)
      for index in [2, 7] {
        #expect(simulator.core.store.record(named: mixed[index])?.vehicleIDs.count == 2)
      }
      #expect(trips[3].vehicleID == trips[4].vehicleID && trips[8].vehicleID == trips[9].vehicleID)
      #expect(trips[4].remainingWaypoints.map(\.tripID) == ["m-04", "m-05", "m-04", "m-05"])
      #expect(Set(trips.map(\.vehicleID)).count == 8)
    }
  }
}

/// `array` repeated `count` times.
private func * <T>(array: [T], count: Int) -> [T] {
  (0..<count).flatMap { _ in array }
}
