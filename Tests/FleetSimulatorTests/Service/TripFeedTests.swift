import FleetSync
import GRPCWire
import Testing

@testable import FleetSimulator

/// `fleetconsumer.v1.TripFeed/WatchTrip` over real HTTP/2.
@Suite("WatchTrip stream")
struct TripFeedTests {
  func watch(
    _ sim: SimulatorHarness, _ name: String, token: String? = "test-token",
    _ configure: (inout FleetFeed.WatchTripRequest) -> Void = { _ in }
  ) async throws -> [FleetFeed.TripUpdate] {
    var request = FleetFeed.WatchTripRequest()
    request.name = name
    configure(&request)
    return try await sim.channel.serverStreaming(
      FleetFeed.TripFeed.watchTrip, request,
      options: SimulatorHarness.call(token: token, timeout: .seconds(30))
    ) { updates in
      var all: [FleetFeed.TripUpdate] = []
      for try await update in updates { all.append(update) }
      return all
    }
  }

  @Test("updates come with sequence 1, 2, 3…, show every status in order and end OK at COMPLETE")
  func wholeTrip() async throws {
    try await SimulatorHarness.with(fastOptions()) { sim in
      let created = try await sim.createTrip(SimulatorHarness.uniqueTripID(), fastTrip())
      let updates = try await watch(sim, created.name)
      #expect(updates.map(\.sequence) == Array(1...UInt64(updates.count)))
      var statuses: [FleetEngine.TripStatus] = []
      for update in updates where statuses.last != update.trip?.tripStatus {
        statuses.append(update.trip!.tripStatus)
      }
      #expect(statuses == fullLifecycle)
      #expect(updates.last?.trip?.tripStatus == .complete)
      #expect(updates.count > fullLifecycle.count, "position updates while driving")
      let times = updates.compactMap { $0.updateTime?.date }
      #expect(times == times.sorted() && times.count == updates.count)

      // The first update carries the whole trip; later ones the route only when it changed.
      let first = try #require(updates.first?.trip)
      #expect(!first.route.isEmpty && first.currentRouteSegmentTraffic != nil)
      for (previous, update) in zip(updates, updates.dropFirst()) {
        let (a, b) = (previous.trip!, update.trip!)
        if a.currentRouteSegmentVersion == b.currentRouteSegmentVersion {
          #expect(b.route.isEmpty, "unchanged route resent in update \(update.sequence)")
        }
        if b.tripStatus == a.tripStatus, b.tripStatus == .enrouteToDropoff {
          #expect(b.remainingDistanceMeters! <= a.remainingDistanceMeters!)
        }
      }
    }
  }

  @Test("a stream that starts with the caller's versions leaves the held parts out")
  func heldVersions() async throws {
    var options = VersionTests.standingStill
    options.feedInterval = .milliseconds(20)
    try await SimulatorHarness.with(options) { sim in
      let created = try await sim.createTrip()
      let full = try await sim.getTrip(created.name)
      let task = Task {
        try await watch(sim, created.name) {
          $0.currentRouteSegmentVersion = full.currentRouteSegmentVersion
          $0.currentRouteSegmentTrafficVersion = full.currentRouteSegmentTrafficVersion
          $0.remainingWaypointsRouteVersion = full.remainingWaypointsRouteVersion
        }
      }
      try await Task.sleep(for: .milliseconds(300))
      task.cancel()
      let error = await #expect(throws: RPCError.self) { try await task.value }
      #expect(error?.code == .cancelled)
      // Nothing changes while the trip stays NEW: one update in 300 ms, without the route.
      let watched = try await watchFirst(sim, created.name, full)
      #expect(watched.sequence == 1)
      #expect(
        watched.trip?.route.isEmpty == true && watched.trip?.currentRouteSegmentTraffic == nil)
      #expect(watched.trip?.currentRouteSegmentVersion == full.currentRouteSegmentVersion)
    }
  }

  /// The first update of a stream that sends `full`'s versions.
  func watchFirst(_ sim: SimulatorHarness, _ name: String, _ full: FleetEngine.Trip) async throws
    -> FleetFeed.TripUpdate
  {
    var request = FleetFeed.WatchTripRequest()
    request.name = name
    request.currentRouteSegmentVersion = full.currentRouteSegmentVersion
    request.currentRouteSegmentTrafficVersion = full.currentRouteSegmentTrafficVersion
    request.remainingWaypointsRouteVersion = full.remainingWaypointsRouteVersion
    return try await sim.channel.serverStreaming(
      FleetFeed.TripFeed.watchTrip, request, options: SimulatorHarness.call()
    ) { updates in
      var iterator = updates.makeAsyncIterator()
      return try #require(try await iterator.next())
    }
  }

  @Test("an UpdateTrip reaches the stream of a trip that stands still at once, if it shows")
  func updateWhileStanding() async throws {
    // NEW for an hour: without word of the update the stream would sleep past the deadline.
    try await SimulatorHarness.with(VersionTests.standingStill) { sim in
      let created = try await sim.createTrip()
      let (first, second) = try await sim.updates(of: created.name) {
        // The same passengers again change nothing a caller sees: no update for that one.
        var trip = FleetEngine.Trip()
        trip.numberOfPassengers = created.numberOfPassengers
        try await sim.updateTrip(created.name, paths: ["number_of_passengers"], trip)
        trip.numberOfPassengers = created.numberOfPassengers + 3
        try await sim.updateTrip(created.name, paths: ["number_of_passengers"], trip)
      }
      #expect(first.trip?.numberOfPassengers == created.numberOfPassengers)
      #expect(second.sequence == 2)
      #expect(second.trip?.numberOfPassengers == created.numberOfPassengers + 3)
      #expect(second.trip?.tripStatus == .new && second.trip?.route.isEmpty == true)
    }
  }

  @Test("a trip canceled mid-stream ends the stream OK with a CANCELED update")
  func canceledMidStream() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      let created = try await sim.createTrip()
      var request = FleetFeed.WatchTripRequest()
      request.name = created.name
      // Canceled once the stream's first update came: the stream is under way.
      let updates = try await sim.channel.serverStreaming(
        FleetFeed.TripFeed.watchTrip, request,
        options: SimulatorHarness.call(timeout: .seconds(30))
      ) { updates in
        var all: [FleetFeed.TripUpdate] = []
        for try await update in updates {
          if all.isEmpty { try await sim.cancelTrip(created.name) }
          all.append(update)
        }
        return all
      }
      #expect(updates.first?.trip?.tripStatus == .new)
      #expect(updates.last?.trip?.tripStatus == .canceled)
    }
  }

  @Test("stream errors: INVALID_ARGUMENT, NOT_FOUND, UNAUTHENTICATED")
  func errors() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      for (name, token, code) in [
        ("nonsense", "t", StatusCode.invalidArgument),
        ("providers/p/trips/missing", "t", .notFound),
        ("providers/p/trips/missing", nil, .unauthenticated),
      ] as [(String, String?, StatusCode)] {
        let error = await #expect(throws: RPCError.self) {
          try await watch(sim, name, token: token)
        }
        #expect(error?.code == code)
        #expect(error?.errorInfo?.domain == "fleetengine.googleapis.com")
      }
    }
  }

  @Test("many streams at once each see their trip to the end")
  func manyStreams() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1200)) { sim in
      let names = try sim.simulator.createTrips(count: 50, providerID: "many")
      let results = try await withThrowingTaskGroup(of: [FleetFeed.TripUpdate].self) { group in
        for name in names { group.addTask { try await watch(sim, name) } }
        var all: [[FleetFeed.TripUpdate]] = []
        for try await updates in group { all.append(updates) }
        return all
      }
      #expect(results.count == 50)
      #expect(
        results.allSatisfy { $0.last?.trip?.tripStatus == .complete && $0.first?.sequence == 1 })
    }
  }
}
