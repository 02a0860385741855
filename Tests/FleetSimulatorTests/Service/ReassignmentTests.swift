import GRPCWire
import Testing

@testable import FleetSimulator

/// A trip's `vehicle_id` changing under way: by UpdateTrip, as a provider reassigns a trip,
/// and as planned for made-up trips.
@Suite("Vehicle reassignment")
struct ReassignmentTests {
  /// UpdateTrip of `name` to vehicle `vehicleID`.
  func reassign(_ sim: SimulatorHarness, _ name: String, to vehicleID: String) async throws
    -> FleetEngine.Trip
  {
    var trip = FleetEngine.Trip()
    trip.vehicleID = vehicleID
    return try await sim.updateTrip(name, paths: ["vehicle_id"], trip)
  }

  @Test("UpdateTrip before the pickup: a new vehicle drives there from a new place; search follows")
  func beforePickup() async throws {
    var options = fastOptions(timeScale: 60)
    options.newDuration = .zero
    try await SimulatorHarness.with(options) { sim in
      let created = try await sim.createTrip(SimulatorHarness.uniqueTripID(), fastTrip())
      let before = try await sim.getTrip(created.name)
      #expect(before.tripStatus == .enrouteToPickup)
      let updated = try await reassign(sim, created.name, to: "car-b")
      #expect(updated.vehicleID == "car-b" && updated.tripStatus == .enrouteToPickup)
      // The new vehicle stands at its start, some blocks from the pickup, its route from there.
      let pickup = GeoPoint(try #require(updated.pickupPoint?.point))
      let start = GeoPoint(try #require(updated.lastLocation?.location))
      #expect((599...801).contains(start.distance(to: pickup)), "\(start.distance(to: pickup)) m")
      #expect(updated.route.first == updated.lastLocation?.location)
      #expect(updated.route.last == updated.pickupPoint?.point)
      #expect(updated.remainingWaypoints.count == 3 && updated.vehicleWaypoints.count == 3)
      #expect(updated.etaToFirstWaypoint != before.etaToFirstWaypoint)
      #expect(
        updated.currentRouteSegmentVersion!.date > before.currentRouteSegmentVersion!.date
          && updated.remainingWaypointsVersion!.date > before.remainingWaypointsVersion!.date)

      let after = try await sim.getTrip(created.name)
      #expect(after.vehicleID == "car-b" && after.pickupPoint == before.pickupPoint)
      #expect(try await sim.tripNames(ofVehicle: "car-b") == [created.name])
      #expect(try await sim.tripNames(ofVehicle: created.vehicleID).isEmpty)
    }
  }

  @Test("UpdateTrip at the pickup hands the trip over in place: only vehicle_id changes")
  func inPlace() async throws {
    var options = fastOptions(timeScale: 60)
    options.newDuration = .zero
    options.vehicleStartDistance = 100...150
    options.pickupWait = .seconds(3600)
    options.trafficPeriod = .seconds(3600)
    try await SimulatorHarness.with(options) { sim in
      let created = try await sim.createTrip(SimulatorHarness.uniqueTripID(), fastTrip())
      let before = try await eventually("the vehicle at the pickup") {
        let trip = try await sim.getTrip(created.name)
        return trip.tripStatus == .arrivedAtPickup ? trip : nil
      }
      let empty = await #expect(throws: RPCError.self) {
        try await reassign(sim, created.name, to: "")
      }
      #expect(empty?.code == .invalidArgument)
      _ = try await reassign(sim, created.name, to: "car-b")
      let after = try await sim.getTrip(created.name)
      #expect(after.vehicleID == "car-b" && after.tripStatus == .arrivedAtPickup)
      #expect(after.lastLocation?.location == before.lastLocation?.location)
      // (Less the remaining durations, which tell the time of the look.)
      let stops = { (trip: FleetEngine.Trip) in
        trip.remainingWaypoints.map { waypoint in
          var waypoint = waypoint
          waypoint.duration = nil
          return waypoint
        }
      }
      #expect(after.route == before.route && stops(after) == stops(before))
      #expect(after.currentRouteSegmentVersion == before.currentRouteSegmentVersion)
      #expect(after.remainingWaypointsVersion == before.remainingWaypointsVersion)
      #expect(after.remainingWaypointsRouteVersion == before.remainingWaypointsRouteVersion)

      // An ended trip keeps its vehicle.
      try await sim.cancelTrip(created.name)
      let ended = await #expect(throws: RPCError.self) {
        try await reassign(sim, created.name, to: "car-c")
      }
      #expect(
        ended?.code == .failedPrecondition && ended?.errorInfo?.reason == "TRIP_ALREADY_ENDED")
      #expect(try await sim.getTrip(created.name).vehicleID == "car-b")
    }
  }

  @Test("a reassignment reaches the WatchTrip stream of a trip that stands still at once")
  func reachesStream() async throws {
    try await SimulatorHarness.with(VersionTests.standingStill) { sim in
      let created = try await sim.createTrip()
      let (first, second) = try await sim.updates(of: created.name) {
        _ = try await reassign(sim, created.name, to: "car-b")
      }
      #expect(first.trip?.vehicleID == created.vehicleID)
      #expect(second.trip?.vehicleID == "car-b" && second.trip?.tripStatus == .new)
      // Still NEW, at the new vehicle's start, with its route.
      #expect(second.trip?.lastLocation?.location != first.trip?.lastLocation?.location)
      #expect(second.trip?.route.first == second.trip?.lastLocation?.location)
    }
  }

  @Test(
    "a planned reassignment: halfway to the pickup the trip changes vehicle, polled and streamed")
  func planned() async throws {
    try await SimulatorHarness.with(fastOptions()) { sim in
      let polled = try sim.simulator.createDemoTrip(
        providerID: SimulatorHarness.provider,
        reassignment: PlannedReassignment(vehicleID: "car-b"))
      let streamed = try sim.simulator.createDemoTrip(
        providerID: SimulatorHarness.provider, reassignment: PlannedReassignment())
      async let updates = sim.watchToEnd(streamed)
      let polls = try await sim.pollToEnd(polled)
      let lifecycle: [FleetEngine.TripStatus] = [
        .new, .enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff, .complete,
      ]
      #expect(changes(polls.map(\.tripStatus)) == lifecycle)
      let vehicles = changes(polls.map(\.vehicleID))
      #expect(vehicles.count == 2 && vehicles.last == "car-b", "\(vehicles)")
      #expect(vehicles.first?.hasPrefix("sim-vehicle-") == true)
      let switched = try #require(polls.firstIndex { $0.vehicleID == "car-b" })
      #expect(polls[switched].tripStatus == .enrouteToPickup)
      #expect(
        polls[switched].currentRouteSegmentVersion!.date
          > polls[switched - 1].currentRouteSegmentVersion!.date)

      let trips = try await updates.compactMap(\.trip)
      #expect(changes(trips.map(\.tripStatus)) == lifecycle)
      let streamedVehicles = changes(trips.map(\.vehicleID))
      #expect(streamedVehicles.count == 2, "\(streamedVehicles)")
      #expect(trips.first { $0.vehicleID == streamedVehicles.last }?.tripStatus == .enrouteToPickup)
    }
  }
}
