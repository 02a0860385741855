import Testing

@testable import FleetSimulator

/// The trip model as pure functions: plans, states and rendering at chosen simulated times.
@Suite("Trip plans and states")
struct TripPlanTests {
  let core = SimulatorCore(options: fastOptions())

  func record(_ name: String = "providers/p/trips/t", _ trip: FleetEngine.Trip = fastTrip())
    throws -> TripRecord
  {
    try core.makeRecord(try TripName(parsing: name), trip, now: 1_700_000_000_000_000_000)
  }

  /// The trip rendered at simulated time `time`.
  func render(
    _ record: TripRecord, at time: Double, options: RenderOptions = .full
  ) -> FleetEngine.Trip {
    core.renderer.render(
      record, at: core.clock.wallTime(at: time, createdAt: record.createdAt),
      simulatedTime: time, options: options)
  }

  @Test("the timeline visits every status once, in order, and ends COMPLETE")
  func timeline() throws {
    let record = try record()
    let end = record.plan.completion
    var statuses: [FleetEngine.TripStatus] = []
    for step in 0...Int(end + 30) {
      let status = TripRenderer.status(
        of: record.state(atSimulatedTime: Double(step)).phase, record.plan)
      if statuses.last != status { statuses.append(status) }
    }
    #expect(statuses == fullLifecycle)
  }

  @Test("routes are road-like: axis-aligned runs with points 20–100 m apart, through the stops")
  func roadLike() throws {
    let plan = try record().plan
    let route = plan.route
    #expect(plan.stopCount == 4)
    var turns = 0
    for index in 1..<route.count {
      let (a, b) = (route.point(index - 1), route.point(index))
      let step = a.distance(to: b)
      #expect(step > 0 && step <= 100, "step \(index): \(step) m")
      // Along a street one coordinate stays put (to E7 rounding).
      #expect(abs(a.latitude - b.latitude) < 2e-7 || abs(a.longitude - b.longitude) < 2e-7)
      if index >= 2 {
        let before = route.point(index - 2).bearing(to: a)
        if abs(before - a.bearing(to: b)) > 1 { turns += 1 }
      }
    }
    #expect(turns >= plan.legCount, "every leg turns at least once")
    let requested = [(52.5200, 13.4050), (52.5240, 13.4100), (52.5270, 13.4150)]
    for (stop, (latitude, longitude)) in zip(1..., requested) {
      let point = plan.location(ofStop: stop)
      #expect(abs(point.latitude - latitude) < 1e-7 && abs(point.longitude - longitude) < 1e-7)
    }
    #expect((600...800).contains(plan.location(ofStop: 0).distance(to: plan.location(ofStop: 1))))
  }

  @Test("a plan depends only on the seed and the trip's name")
  func deterministic() throws {
    let first = try record("providers/p/trips/a", FleetEngine.Trip()).plan
    let again = try record("providers/p/trips/a", FleetEngine.Trip()).plan
    let other = try record("providers/p/trips/b", FleetEngine.Trip()).plan
    #expect(first.route.count == again.route.count)
    #expect((0..<first.route.count).allSatisfy { first.route.point($0) == again.route.point($0) })
    #expect(first.location(ofStop: 1) != other.location(ofStop: 1))
  }

  @Test("while driving, the vehicle moves on, the remaining distance and time shrink")
  func driving() throws {
    let record = try record()
    let plan = record.plan
    for leg in 0..<plan.legCount {
      let start = plan.departure(onLeg: leg)
      let end = plan.arrival(atStop: leg + 1)
      var previous: FleetEngine.Trip? = nil
      for time in stride(from: start + 1, to: end, by: 5) {
        let trip = render(record, at: time)
        let state = record.state(atSimulatedTime: time)
        #expect(state.phase == .enroute(leg: leg))
        if let previous {
          #expect(trip.remainingDistanceMeters! < previous.remainingDistanceMeters!)
          #expect(
            trip.remainingTimeToFirstWaypoint!.duration
              < previous.remainingTimeToFirstWaypoint!.duration)
          #expect(trip.lastLocation!.location != previous.lastLocation!.location)
          #expect(trip.etaToFirstWaypoint == previous.etaToFirstWaypoint, "constant speed")
        }
        #expect(trip.lastLocation!.speed! > 8 && trip.lastLocation!.speed! < 8.5)
        previous = trip
      }
    }
  }

  @Test("the route starts at the point passed last: same route and version until the next one")
  func quantisedRoute() throws {
    let record = try record()
    let plan = record.plan
    let leg = 1
    let first = plan.routeIndex(ofStop: leg)
    let speed = Double(plan.speed)
    let passing = { (index: Int) in
      plan.departure(onLeg: leg) + (plan.route.distance(at: index) - plan.route.distance(at: first))
        / speed
    }
    let index = first + 2
    let justAfter = render(record, at: passing(index) + 0.01)
    let later = render(record, at: (passing(index) + passing(index + 1)) / 2)
    let next = render(record, at: passing(index + 1) + 0.01)
    #expect(justAfter.route == later.route)
    #expect(justAfter.currentRouteSegmentVersion == later.currentRouteSegmentVersion)
    #expect(justAfter.route.first == plan.route.point(index).latLng)
    #expect(next.route.count == later.route.count - 1)
    #expect(next.currentRouteSegmentVersion != later.currentRouteSegmentVersion)
    let expected = core.clock.wallTime(at: passing(index + 1), createdAt: record.createdAt)
    #expect(next.currentRouteSegmentVersion == .init(nanosecondsSince1970: expected))
    #expect(justAfter.remainingDistanceMeters != later.remainingDistanceMeters)
  }

  @Test("parts the caller holds are left out; versions are always sent")
  func heldVersionsOmitParts() throws {
    let record = try record()
    let time = record.plan.departure(onLeg: 0) + 20
    let full = render(record, at: time)
    #expect(!full.route.isEmpty && full.currentRouteSegmentTraffic != nil)
    #expect(!full.remainingWaypoints[0].pathToWaypoint.isEmpty)
    var held = RenderOptions.full
    held.hold(versionsOf: full)
    let partial = render(record, at: time, options: held)
    #expect(partial.route.isEmpty && partial.currentRouteSegment.isEmpty)
    #expect(partial.currentRouteSegmentTraffic == nil)
    #expect(partial.remainingWaypoints.count == full.remainingWaypoints.count)
    #expect(
      partial.remainingWaypoints.allSatisfy {
        $0.pathToWaypoint.isEmpty && $0.trafficToWaypoint == nil
      })
    #expect(partial.currentRouteSegmentVersion == full.currentRouteSegmentVersion)
    #expect(partial.currentRouteSegmentTrafficVersion == full.currentRouteSegmentTrafficVersion)
    #expect(partial.remainingWaypointsRouteVersion == full.remainingWaypointsRouteVersion)
    #expect(partial.lastLocation == full.lastLocation)
    #expect(partial.remainingDistanceMeters == full.remainingDistanceMeters)
  }

  @Test("the encoded format fills current_route_segment with the same points")
  func encodedFormat() throws {
    let record = try record()
    let time = record.plan.departure(onLeg: 0) + 20
    let list = render(record, at: time)
    let encoded = render(
      record, at: time, options: RenderOptions(routeFormat: .encodedPolylineType))
    #expect(encoded.route.isEmpty && list.currentRouteSegment.isEmpty)
    let decoded = try #require(PolylineEncoding.decode(encoded.currentRouteSegment))
    #expect(decoded.count == list.route.count)
    for (a, b) in zip(decoded, list.route) {
      #expect(abs(a.latitude - b.latitude) < 1e-5 && abs(a.longitude - b.longitude) < 1e-5)
    }
  }

  @Test("traffic covers the remaining route without gaps; slow and jammed stretches occur")
  func traffic() throws {
    var speeds = Set<FleetEngine.SpeedReadingInterval.Speed>()
    for index in 0..<40 {
      let record = try record("providers/p/trips/traffic-\(index)", FleetEngine.Trip())
      let trip = render(record, at: record.plan.departure(onLeg: 0) + 1)
      let intervals = try #require(trip.currentRouteSegmentTraffic).speedReadingInterval
      #expect(intervals.first?.startPolylinePointIndex == 0)
      #expect(intervals.last.map { Int($0.endPolylinePointIndex) } == trip.route.count - 1)
      for (a, b) in zip(intervals, intervals.dropFirst()) {
        #expect(a.endPolylinePointIndex == b.startPolylinePointIndex && a.speed != b.speed)
      }
      speeds.formUnion(intervals.map(\.speed))
    }
    #expect(speeds == [.normal, .slow, .trafficJam])
  }

  @Test("while waiting, the route and waypoints stand still; traffic changes each period")
  func waiting() throws {
    let record = try record()
    let arrival = record.plan.arrival(atStop: 1)
    let period = core.options.trafficPeriod.seconds
    let a = render(record, at: arrival + 1)
    let b = render(record, at: arrival + 2)
    #expect(a.tripStatus == .arrivedAtPickup)
    #expect(a.currentRouteSegmentVersion == b.currentRouteSegmentVersion)
    #expect(a.remainingWaypointsVersion == b.remainingWaypointsVersion)
    #expect(
      a.remainingWaypoints.map(\.waypointType) == [
        .intermediateDestinationWaypointType, .dropOffWaypointType,
      ])
    // Within one traffic period the traffic version holds; the next period brings a new one.
    let periodStart = (arrival / period).rounded(.down) * period
    if arrival + 2 < periodStart + period {
      #expect(a.currentRouteSegmentTrafficVersion == b.currentRouteSegmentTrafficVersion)
    }
    let nextPeriod = render(record, at: periodStart + period + 0.5)
    #expect(nextPeriod.currentRouteSegmentTrafficVersion != a.currentRouteSegmentTrafficVersion)
  }

  @Test("a completed trip has no route, no waypoints, no ETA, and the vehicle at the drop-off")
  func completed() throws {
    let record = try record()
    let trip = render(record, at: record.plan.completion + 100)
    #expect(trip.tripStatus == .complete)
    #expect(trip.route.isEmpty && trip.remainingWaypoints.isEmpty)
    #expect(trip.remainingDistanceMeters == nil && trip.etaToFirstWaypoint == nil)
    #expect(trip.lastLocation?.location == trip.dropoffPoint?.point)
    #expect(trip.intermediateDestinationIndex == 0)
  }

  @Test("a canceled trip stays where it was canceled")
  func canceled() throws {
    var record = try record()
    let cancelTime = record.plan.departure(onLeg: 0) + 30
    let before = render(record, at: cancelTime)
    record.canceledAt = cancelTime
    let after = render(record, at: cancelTime + 500)
    #expect(after.tripStatus == .canceled)
    #expect(after.lastLocation?.location == before.lastLocation?.location)
    #expect(after.route.isEmpty && after.remainingWaypoints.isEmpty)
    #expect(after.pickupTime == nil && after.dropoffTime == nil)
  }

  @Test("with the default options generated trips take 10–30 real seconds, NEW and pickup 2 s")
  func defaultDurations() throws {
    let core = SimulatorCore(options: SimulatorOptions())
    var seconds: [Double] = []
    for index in 0..<200 {
      let name = try TripName(parsing: "providers/p/trips/demo-\(index)")
      let plan = try core.makeRecord(name, FleetEngine.Trip(), now: 0).plan
      seconds.append(plan.completion / core.options.timeScale)
      #expect(plan.phase(at: 0).end / core.options.timeScale == 2)
      #expect(plan.wait(atStop: 1) / core.options.timeScale == 2)
    }
    let mean = seconds.reduce(0, +) / Double(seconds.count)
    print("[demo] trip durations at 60x: \(seconds.min()!)...\(seconds.max()!) s, mean \(mean) s")
    #expect(seconds.allSatisfy { (10...30).contains($0) })
  }
}
