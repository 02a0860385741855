import GRPCWire
import Testing

@testable import FleetSimulator

/// Versions over the wire: stable while nothing changes, honoured when the caller sends them.
@Suite("Versioned parts of GetTrip")
struct VersionTests {
  /// Real time, and a trip that stays NEW for an hour: nothing moves between calls.
  static var standingStill: SimulatorOptions {
    var options = fastOptions(timeScale: 1)
    options.newDuration = .seconds(3600)
    options.trafficPeriod = .seconds(3600)
    return options
  }

  @Test("two calls with nothing changed in between give the same versions and data")
  func stable() async throws {
    try await SimulatorHarness.with(Self.standingStill) { sim in
      let created = try await sim.createTrip()
      let first = try await sim.getTrip(created.name)
      let second = try await sim.getTrip(created.name)
      #expect(first.currentRouteSegmentVersion == second.currentRouteSegmentVersion)
      #expect(first.currentRouteSegmentTrafficVersion == second.currentRouteSegmentTrafficVersion)
      #expect(first.remainingWaypointsVersion == second.remainingWaypointsVersion)
      #expect(first.remainingWaypointsRouteVersion == second.remainingWaypointsRouteVersion)
      #expect(first.route == second.route && !first.route.isEmpty)
      #expect(first.currentRouteSegmentTraffic == second.currentRouteSegmentTraffic)
      #expect(first.currentRouteSegmentVersion == created.currentRouteSegmentVersion)
    }
  }

  @Test("sending the current versions leaves route, traffic and waypoint paths out")
  func honoured() async throws {
    try await SimulatorHarness.with(Self.standingStill) { sim in
      let created = try await sim.createTrip()
      let full = try await sim.getTrip(created.name)
      let partial = try await sim.getTrip(created.name) {
        $0.currentRouteSegmentVersion = full.currentRouteSegmentVersion
        $0.currentRouteSegmentTrafficVersion = full.currentRouteSegmentTrafficVersion
        $0.remainingWaypointsRouteVersion = full.remainingWaypointsRouteVersion
      }
      #expect(partial.route.isEmpty && partial.currentRouteSegmentTraffic == nil)
      #expect(partial.remainingWaypoints.count == full.remainingWaypoints.count)
      #expect(
        partial.remainingWaypoints.allSatisfy {
          $0.pathToWaypoint.isEmpty && $0.trafficToWaypoint == nil
        })
      #expect(partial.currentRouteSegmentVersion == full.currentRouteSegmentVersion)
      #expect(partial.remainingDistanceMeters == full.remainingDistanceMeters)
      #expect(
        partial.tripStatus == full.tripStatus
          && partial.lastLocation?.location == full.lastLocation?.location)

      // Only the part whose version is held is left out; an older version gets it again.
      var older = try #require(full.currentRouteSegmentVersion)
      older.seconds -= 1
      let routeOnly = try await sim.getTrip(created.name) {
        $0.currentRouteSegmentVersion = older
        $0.currentRouteSegmentTrafficVersion = full.currentRouteSegmentTrafficVersion
      }
      #expect(routeOnly.route == full.route && routeOnly.currentRouteSegmentTraffic == nil)
      #expect(!routeOnly.remainingWaypoints[0].pathToWaypoint.isEmpty)
    }
  }

  @Test("while driving, the route version changes only when the vehicle passes a route point")
  func changesWithRoutePoints() async throws {
    var options = fastOptions(timeScale: 20)
    options.newDuration = .zero
    try await SimulatorHarness.with(options) { sim in
      let created = try await sim.createTrip()
      var previous = try await sim.getTrip(created.name)
      var changes = 0
      for _ in 0..<40 {
        try await Task.sleep(for: .milliseconds(25))
        let trip = try await sim.getTrip(created.name)
        let sameStart =
          trip.route.first == previous.route.first && trip.route.count == previous.route.count
        #expect(
          sameStart == (trip.currentRouteSegmentVersion == previous.currentRouteSegmentVersion))
        if !sameStart {
          changes += 1
          #expect(trip.currentRouteSegmentVersion!.date > previous.currentRouteSegmentVersion!.date)
          #expect(
            trip.currentRouteSegmentTrafficVersion != previous.currentRouteSegmentTrafficVersion)
        }
        previous = trip
      }
      // 1 s at 20× is about 167 m: two or three points passed, in about 40 calls.
      #expect((1...10).contains(changes), "\(changes) route changes")
    }
  }
}
