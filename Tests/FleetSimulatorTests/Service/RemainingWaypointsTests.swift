import GRPCWire
import Testing

@testable import FleetSimulator

/// Multi-stop trips over the wire: the intermediate destination index, and the remaining
/// waypoints with their paths, distances, durations and traffic, honouring
/// `remaining_waypoints_route_version`.
@Suite("Intermediate destinations and remaining waypoints")
struct RemainingWaypointsTests {
  static let lifecycle: [FleetEngine.TripStatus] = [
    .new, .enrouteToPickup, .arrivedAtPickup,
    .enrouteToIntermediateDestination, .arrivedAtIntermediateDestination,
    .enrouteToIntermediateDestination, .arrivedAtIntermediateDestination,
    .enrouteToIntermediateDestination, .arrivedAtIntermediateDestination,
    .enrouteToDropoff, .complete,
  ]

  /// Checks the index of `trip` (of a three-stop trip) against its status and waypoints.
  func checkIndex(_ trip: FleetEngine.Trip) {
    let intermediatesLeft = trip.remainingWaypoints.filter {
      $0.waypointType == .intermediateDestinationWaypointType
    }.count
    let index = Int(trip.intermediateDestinationIndex)
    switch trip.tripStatus {
    case .enrouteToIntermediateDestination:
      #expect(index == 3 - intermediatesLeft)
      // The first remaining waypoint is the destination the index names.
      #expect(trip.remainingWaypoints.first?.location == trip.intermediateDestinations[index])
    case .arrivedAtIntermediateDestination:
      #expect(index == 2 - intermediatesLeft)
      #expect(trip.lastLocation?.location == trip.intermediateDestinations[index].point)
    case .new, .enrouteToPickup, .arrivedAtPickup: #expect(index == 0)
    default: #expect(index == 2)
    }
  }

  @Test("a three-stop trip, polled: the index goes 0, 1, 2 and the remaining waypoints shrink")
  func threeStopsPolled() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 300)) { sim in
      let created = try await sim.createTrip(SimulatorHarness.uniqueTripID(), threeStopTrip())
      #expect(created.intermediateDestinations.count == 3)
      let polls = try await sim.pollToEnd(created.name)
      #expect(changes(polls.map(\.tripStatus)) == Self.lifecycle, "\(polls.count) polls")
      #expect(changes(polls.map(\.intermediateDestinationIndex)) == [0, 1, 2])
      #expect(changes(polls.map(\.remainingWaypoints.count)) == [5, 4, 3, 2, 1, 0])
      for trip in polls { checkIndex(trip) }
    }
  }

  @Test("a three-stop trip, streamed: every stop reported in order, the index with it")
  func threeStopsStreamed() async throws {
    try await SimulatorHarness.with(fastOptions()) { sim in
      let created = try await sim.createTrip(SimulatorHarness.uniqueTripID(), threeStopTrip())
      let trips = try await sim.watchToEnd(created.name).compactMap(\.trip)
      #expect(changes(trips.map(\.tripStatus)) == Self.lifecycle)
      #expect(changes(trips.map(\.intermediateDestinationIndex)) == [0, 1, 2])
      #expect(changes(trips.map(\.remainingWaypoints.count)) == [5, 4, 3, 2, 1, 0])
      for trip in trips { checkIndex(trip) }
    }
  }

  /// Checks that every remaining waypoint of `trip` has its path, distance, duration and
  /// traffic, and that the paths run on from the vehicle, stop to stop.
  func checkPaths(_ trip: FleetEngine.Trip) throws {
    var previousEnd = trip.route.first
    for (index, waypoint) in trip.remainingWaypoints.enumerated() {
      let path = waypoint.pathToWaypoint
      #expect(path.count >= 2, "waypoint \(index)")
      #expect(path.first == previousEnd, "waypoint \(index) starts where the last one ended")
      #expect(path.last == waypoint.location?.point, "waypoint \(index) ends at its stop")
      previousEnd = path.last
      let length = zip(path, path.dropFirst()).reduce(0.0) {
        $0 + GeoPoint($1.0).distance(to: GeoPoint($1.1))
      }
      let meters = Double(try #require(waypoint.distanceMeters))
      #expect(meters > 0 && abs(meters - length) <= 2 + length * 0.01, "\(meters) vs \(length)")
      #expect(try #require(waypoint.duration).duration > .zero)
      #expect(waypoint.eta != nil)
      let decoded = try #require(PolylineEncoding.decode(waypoint.encodedPathToWaypoint))
      #expect(decoded.count == path.count)
      let traffic = try #require(waypoint.trafficToWaypoint)
      #expect(traffic.encodedPathToWaypoint == waypoint.encodedPathToWaypoint)
      let intervals = traffic.speedReadingInterval
      #expect(intervals.first?.startPolylinePointIndex == 0)
      #expect(intervals.last.map { Int($0.endPolylinePointIndex) } == path.count - 1)
      for (a, b) in zip(intervals, intervals.dropFirst()) {
        #expect(a.endPolylinePointIndex == b.startPolylinePointIndex)
      }
    }
    // The first one's path is the current route; its distance what is left of it.
    #expect(trip.remainingWaypoints.first?.pathToWaypoint == trip.route)
    #expect(trip.remainingWaypoints.first?.distanceMeters == trip.remainingDistanceMeters)
  }

  @Test(
    "every remaining waypoint has its path, distance, duration and traffic, standing or driving")
  func everyWaypointHasAPath() async throws {
    var options = fastOptions(timeScale: 1)
    options.newDuration = .seconds(3600)
    try await SimulatorHarness.with(options) { sim in
      let standing = try await sim.createTrip(SimulatorHarness.uniqueTripID(), threeStopTrip())
      let trip = try await sim.getTrip(standing.name)
      #expect(trip.tripStatus == .new && trip.remainingWaypoints.count == 5)
      try checkPaths(trip)
      try checkPaths(try await sim.getTrip(standing.name) { $0.routeFormatType = .latLngListType })
    }
    options.newDuration = .zero
    try await SimulatorHarness.with(options) { sim in
      let driving = try await sim.createTrip(SimulatorHarness.uniqueTripID(), threeStopTrip())
      let trip = try await sim.getTrip(driving.name)
      #expect(trip.tripStatus == .enrouteToPickup && trip.remainingWaypoints.count == 5)
      try checkPaths(trip)
    }
  }

  @Test("remaining_waypoints_route_version: held, every waypoint's path and traffic are left out")
  func waypointsRouteVersion() async throws {
    var options = fastOptions(timeScale: 20)
    options.newDuration = .zero
    try await SimulatorHarness.with(options) { sim in
      let created = try await sim.createTrip(SimulatorHarness.uniqueTripID(), threeStopTrip())
      var held = try #require(try await sim.getTrip(created.name).remainingWaypointsRouteVersion)
      var (left, sent) = (0, 0)
      for _ in 0..<30 {
        try await Task.sleep(for: .milliseconds(20))
        let trip = try await sim.getTrip(created.name) {
          $0.remainingWaypointsRouteVersion = held
        }
        // The five waypoints are the drive to the pickup's (about 4 s at 20×): once there, one
        // is gone. On a loaded machine the 30 calls outlasted the drive.
        guard trip.tripStatus == .enrouteToPickup else { break }
        let waypoints = trip.remainingWaypoints
        #expect(waypoints.count == 5)
        #expect(waypoints.allSatisfy { $0.distanceMeters != nil && $0.duration != nil })
        if trip.remainingWaypointsRouteVersion == held {
          left += 1
          #expect(
            waypoints.allSatisfy { $0.pathToWaypoint.isEmpty && $0.trafficToWaypoint == nil })
        } else {
          // Changed (the vehicle passed a route point): every path comes again.
          sent += 1
          #expect(trip.remainingWaypointsRouteVersion!.date > held.date)
          try checkPaths(trip)
          held = try #require(trip.remainingWaypointsRouteVersion)
        }
      }
      // 600 ms at 20× is about 100 m driven: a route point passed or two, in 30 calls.
      #expect(left > 0 && sent > 0, "left out \(left), sent \(sent)")
    }
  }
}
