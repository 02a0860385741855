import GRPCWire
import Testing

@testable import FleetSimulator

/// Trips followed over real HTTP/2 with GRPCWire's client, as a consumer polls Fleet Engine.
@Suite("Trip lifecycle over gRPC")
struct LifecycleTests {
  @Test("GetTrip polls see every status in order, a moving vehicle and shrinking distance and ETA")
  func lifecycle() async throws {
    try await SimulatorHarness.with(fastOptions()) { sim in
      let created = try await sim.createTrip(SimulatorHarness.uniqueTripID(), fastTrip())
      #expect(created.tripStatus == .new)
      #expect(created.vehicleID.hasPrefix("sim-vehicle-"))
      #expect(created.vehicleWaypoints.count == 3, "CreateTrip shows the vehicle's waypoints")
      var statuses: [FleetEngine.TripStatus] = [created.tripStatus]
      var polls: [FleetEngine.Trip] = []
      let deadline = ContinuousClock.now + .seconds(20)
      while statuses.last != .complete && ContinuousClock.now < deadline {
        let trip = try await sim.getTrip(created.name)
        polls.append(trip)
        if statuses.last != trip.tripStatus { statuses.append(trip.tripStatus) }
        try await Task.sleep(for: .milliseconds(5))
      }
      #expect(statuses == fullLifecycle, "\(polls.count) polls")

      // Within each drive the vehicle moves on and what is left shrinks.
      for status in [
        FleetEngine.TripStatus.enrouteToPickup, .enrouteToIntermediateDestination,
        .enrouteToDropoff,
      ] {
        let drive = polls.filter { $0.tripStatus == status }
        #expect(drive.count >= 3, "\(status): \(drive.count) polls")
        guard let first = drive.first, let last = drive.last else { continue }
        #expect(last.remainingDistanceMeters! < first.remainingDistanceMeters!)
        #expect(
          last.remainingTimeToFirstWaypoint!.duration < first.remainingTimeToFirstWaypoint!.duration
        )
        #expect(last.lastLocation?.location != first.lastLocation?.location)
        for (a, b) in zip(drive, drive.dropFirst()) {
          #expect(b.remainingDistanceMeters! <= a.remainingDistanceMeters!)
          #expect(b.route.count <= a.route.count)
        }
      }
      let waiting = polls.filter { $0.tripStatus == .arrivedAtIntermediateDestination }
      #expect(waiting.allSatisfy { $0.intermediateDestinationIndex == 0 })
      let final = try #require(polls.last)
      #expect(final.lastLocation?.location == final.dropoffPoint?.point)
      #expect(final.remainingWaypoints.isEmpty && final.route.isEmpty)
    }
  }

  @Test("GetTrip shows what a consumer needs: stops, ETAs, route, traffic, waypoints, vehicle")
  func fields() async throws {
    var options = fastOptions(timeScale: 1)
    options.newDuration = .zero
    try await SimulatorHarness.with(options) { sim in
      let created = try await sim.createTrip(
        "fields-\(SimulatorHarness.uniqueTripID())", fastTrip())
      let trip = try await sim.getTrip(created.name)
      #expect(trip.name == created.name && trip.vehicleID == created.vehicleID)
      #expect(trip.tripStatus == .enrouteToPickup && trip.tripType == .exclusive)
      #expect(trip.view == .journeySharingV1s && trip.numberOfPassengers == 2)
      #expect(
        trip.pickupPoint?.point?.latitude == 52.52 && trip.dropoffPoint?.point?.latitude == 52.527)
      #expect(
        trip.intermediateDestinations.count == 1 && trip.intermediateDestinationsVersion != nil)
      let pickup = try #require(trip.pickupTime?.date)
      let dropoff = try #require(trip.dropoffTime?.date)
      #expect(pickup < dropoff && pickup.timeIntervalSinceNow > 60, "real time at scale 1")
      #expect(trip.etaToFirstWaypoint == trip.pickupTime)
      #expect(trip.route.count >= 8 && trip.currentRouteSegment.isEmpty)
      #expect(trip.currentRouteSegmentEndPoint?.waypointType == .pickupWaypointType)
      #expect(trip.currentRouteSegmentEndPoint?.location == trip.pickupPoint)
      let traffic = try #require(trip.currentRouteSegmentTraffic)
      #expect(!traffic.speedReadingInterval.isEmpty && !traffic.encodedPathToWaypoint.isEmpty)
      #expect(
        trip.remainingWaypoints.map(\.waypointType) == [
          .pickupWaypointType, .intermediateDestinationWaypointType, .dropOffWaypointType,
        ])
      #expect(
        trip.remainingWaypoints.allSatisfy {
          $0.tripID == created.name.split(separator: "/").last.map(String.init)
        })
      #expect(trip.remainingWaypoints[0].distanceMeters == trip.remainingDistanceMeters)
      #expect(trip.remainingWaypoints[0].pathToWaypoint == trip.route)
      #expect(trip.remainingWaypoints[1].eta!.date < trip.remainingWaypoints[2].eta!.date)
      for version in [
        trip.currentRouteSegmentVersion, trip.currentRouteSegmentTrafficVersion,
        trip.remainingWaypointsVersion, trip.remainingWaypointsRouteVersion,
      ] {
        #expect(version != nil)
      }
      let location = try #require(trip.lastLocation)
      #expect(location.location != nil && location.heading != nil && location.updateTime != nil)
      #expect(location.serverTime != nil && location.locationSensor == .gps)
      #expect(location.speed.map { abs($0 - 30 / 3.6) < 0.01 } == true)
      #expect(trip.vehicleWaypoints.isEmpty, "GetTrip never shows the vehicle's waypoints")

      var encodedTrip = try await sim.getTrip(created.name) {
        $0.routeFormatType = .encodedPolylineType
      }
      #expect(encodedTrip.route.isEmpty && !encodedTrip.currentRouteSegment.isEmpty)
      encodedTrip = try await sim.getTrip(created.name) { $0.view = .unspecified }
      #expect(encodedTrip.view == .sdk)
    }
  }

  @Test("UpdateTrip changes passengers, attributes and vehicle, and cancels a trip")
  func update() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      let created = try await sim.createTrip()
      var request = FleetEngine.UpdateTripRequest()
      request.name = created.name
      var trip = FleetEngine.Trip()
      trip.numberOfPassengers = 4
      var attribute = FleetEngine.TripAttribute()
      attribute.key = "colour"
      attribute.tripAttributeValue = .stringValue("blue")
      trip.attributes = [attribute]
      trip.vehicleID = "my-car"
      request.trip = trip
      var mask = GoogleProtobuf.FieldMask()
      mask.paths = ["number_of_passengers", "attributes", "vehicleId"]
      request.updateMask = mask
      let updated = try await sim.channel.unary(
        FleetEngine.TripService.updateTrip, request, options: SimulatorHarness.call()
      ).message
      #expect(updated.numberOfPassengers == 4 && updated.attributes == [attribute])
      #expect(updated.vehicleID == "my-car" && !updated.vehicleWaypoints.isEmpty)
      #expect(try await sim.getTrip(created.name).vehicleID == "my-car")

      request.trip?.tripStatus = .canceled
      mask.paths = ["trip_status"]
      request.updateMask = mask
      let canceled = try await sim.channel.unary(
        FleetEngine.TripService.updateTrip, request, options: SimulatorHarness.call()
      ).message
      #expect(canceled.tripStatus == .canceled)
      let error = await #expect(throws: RPCError.self) {
        try await sim.channel.unary(
          FleetEngine.TripService.updateTrip, request, options: SimulatorHarness.call())
      }
      #expect(error?.code == .failedPrecondition)

      // Only CANCELED may be set; other fields cannot be updated.
      request.trip?.tripStatus = .complete
      for paths in [["trip_status"], ["dropoff_point"], []] {
        mask.paths = paths
        request.updateMask = mask
        let invalid = await #expect(throws: RPCError.self) {
          try await sim.channel.unary(
            FleetEngine.TripService.updateTrip, request, options: SimulatorHarness.call())
        }
        #expect(invalid?.code == .invalidArgument, "\(paths)")
        #expect(invalid?.badRequest?.fieldViolations.isEmpty == false)
      }
    }
  }

  @Test("DeleteTrip removes an ended trip and refuses an active one")
  func delete() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      let created = try await sim.createTrip()
      var request = FleetEngine.DeleteTripRequest()
      request.name = created.name
      let active = await #expect(throws: RPCError.self) {
        try await sim.channel.unary(
          FleetEngine.TripService.deleteTrip, request, options: SimulatorHarness.call())
      }
      #expect(active?.code == .failedPrecondition)
      try await sim.cancelTrip(created.name)
      _ = try await sim.channel.unary(
        FleetEngine.TripService.deleteTrip, request, options: SimulatorHarness.call())
      let gone = await #expect(throws: RPCError.self) { try await sim.getTrip(created.name) }
      #expect(gone?.code == .notFound)
      #expect(sim.simulator.tripCount == 0)
    }
  }

  @Test("the demo trip completes within half a minute at the default time scale")
  func demoTrip() async throws {
    try await SimulatorHarness.with { sim in
      let name = try sim.simulator.createDemoTrip(intermediateDestinations: 1)
      let trip = try #require(sim.simulator.trip(named: name))
      #expect(name == "providers/demo-provider/trips/demo-1")
      #expect(trip.intermediateDestinations.count == 1)
      let total = try #require(trip.dropoffTime).date.timeIntervalSinceNow
      #expect(total > 8 && total < 30, "the demo takes \(total) s")
      #expect(throws: SimulatorError.self) { try sim.simulator.createDemoTrip(tripID: "demo-1") }
      #expect(throws: SimulatorError.self) { try sim.simulator.createDemoTrip(providerID: "a/b") }
    }
  }
}
