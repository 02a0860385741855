import Testing

@testable import FleetSimulator

/// Plans that change under way — a vehicle reassigned, a second rider joining or leaving —
/// as pure functions of the records, rendered at chosen simulated times.
@Suite("Plan changes: reassignment and shared rides")
struct PlanChangeTests {
  let core = SimulatorCore(options: fastOptions())
  static let createdAt: Int64 = 1_700_000_000_000_000_000

  func record(
    _ name: String = "providers/p/trips/a", _ trip: FleetEngine.Trip = fastTrip(),
    vehicle: String = "car-a"
  ) throws -> TripRecord {
    var record = try core.makeRecord(try TripName(parsing: name), trip, now: Self.createdAt)
    record.vehicleID = vehicle
    return record
  }

  /// The trip rendered at simulated time `time`.
  func render(_ record: TripRecord, at time: Double, options: RenderOptions = .full)
    -> FleetEngine.Trip
  {
    core.renderer.render(
      record, at: core.clock.wallTime(at: time, createdAt: record.createdAt),
      simulatedTime: time, options: options)
  }

  /// `trip` less the fields that tell the time of the look.
  func timeless(_ trip: FleetEngine.Trip) -> FleetEngine.Trip {
    var trip = trip
    trip.remainingTimeToFirstWaypoint = nil
    trip.lastLocation?.updateTime = nil
    trip.lastLocation?.serverTime = nil
    return trip
  }

  @Test("a reassignment before the pickup: a new vehicle starts afresh near it at that moment")
  func reassignedBeforePickup() throws {
    let original = try record()
    let plan = original.plan
    let moment = plan.departure(onLeg: 0) + plan.duration(ofLeg: 0) / 2
    let reassigned = core.planning(PlannedReassignment(vehicleID: "car-b"), of: original)
    #expect(reassigned.vehicleIDs == ["car-a", "car-b"])

    // The past is as it was, and the moment of the change is a change a stream waits for.
    for time in stride(from: 0, to: moment, by: 7) {
      #expect(render(reassigned, at: time) == render(original, at: time), "at \(time)")
    }
    #expect(reassigned.state(atSimulatedTime: moment - 1).phaseEnd == moment)

    let before = render(reassigned, at: moment - 0.001)
    let after = render(reassigned, at: moment)
    #expect(before.vehicleID == "car-a" && after.vehicleID == "car-b")
    #expect(after.tripStatus == .enrouteToPickup)
    let pickup = GeoPoint(try #require(after.pickupPoint?.point))
    let start = GeoPoint(try #require(after.lastLocation?.location))
    #expect((599...801).contains(start.distance(to: pickup)), "\(start.distance(to: pickup)) m")
    #expect(after.route.first == after.lastLocation?.location, "the route starts at the vehicle")
    #expect(after.route.last == after.pickupPoint?.point)
    let wallMoment = core.clock.wallTime(at: moment, createdAt: Self.createdAt)
    #expect(after.currentRouteSegmentVersion == .init(nanosecondsSince1970: wallMoment))
    #expect(after.remainingWaypointsVersion == .init(nanosecondsSince1970: wallMoment))
    #expect(after.etaToFirstWaypoint != before.etaToFirstWaypoint)
    #expect(after.pickupPoint == before.pickupPoint && after.dropoffPoint == before.dropoffPoint)

    // From the pickup on, the same streets; the new vehicle completes the trip.
    let newPlan = reassigned.later[0].plan
    #expect(newPlan.stopCount == plan.stopCount)
    for leg in 1..<plan.legCount {
      let old = (plan.routeIndex(ofStop: leg)...plan.routeIndex(ofStop: leg + 1)).map {
        plan.route.point($0)
      }
      let new = (newPlan.routeIndex(ofStop: leg)...newPlan.routeIndex(ofStop: leg + 1)).map {
        newPlan.route.point($0)
      }
      #expect(old == new, "leg \(leg)")
    }
    let end = render(reassigned, at: moment + newPlan.completion + 1)
    #expect(end.tripStatus == .complete && end.vehicleID == "car-b")
    #expect(end.lastLocation?.location == end.dropoffPoint?.point)
  }

  @Test("looked at phase by phase, as a stream catches up, a reassigned trip moves on at each end")
  func phaseByPhase() throws {
    for index in 0..<20 {
      let original = try record("providers/p/trips/phases-\(index)", FleetEngine.Trip())
      let reassigned = core.planning(PlannedReassignment(), of: original)
      var state = reassigned.state(atSimulatedTime: 0)
      var statuses = [reassigned.status(in: state)]
      while !state.phase.isTerminal {
        let next = reassigned.state(atSimulatedTime: state.phaseEnd)
        #expect(next.phase != state.phase || next.assignment != state.assignment, "stuck")
        guard next.phase != state.phase || next.assignment != state.assignment else { break }
        state = next
        if statuses.last != reassigned.status(in: state) {
          statuses.append(reassigned.status(in: state))
        }
      }
      #expect(statuses == [.new, .enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff, .complete])
    }
  }

  @Test("a reassignment planned during NEW keeps the trip NEW until it would have set off")
  func reassignedWhileNew() throws {
    let original = try record()
    let reassigned = core.planning(
      PlannedReassignment(after: .seconds(10), vehicleID: "car-b"), of: original)
    let setOff = original.plan.departure(onLeg: 0)
    #expect(render(reassigned, at: 10).tripStatus == .new)
    #expect(render(reassigned, at: setOff - 0.01).tripStatus == .new)
    #expect(render(reassigned, at: setOff + 0.01).tripStatus == .enrouteToPickup)
    #expect(render(reassigned, at: 10).vehicleID == "car-b")
  }

  @Test("a reassignment after the pickup hands the trip over in place: only the ID changes")
  func reassignedInPlace() throws {
    let original = try record()
    let moment = original.plan.departure(onLeg: 1) + 20
    let reassigned = core.planning(
      PlannedReassignment(after: .seconds(moment), vehicleID: "car-b"), of: original)
    for time in [moment - 5, moment, moment + 5, original.plan.completion + 1] {
      var seen = render(reassigned, at: time)
      #expect(seen.vehicleID == (time < moment ? "car-a" : "car-b"))
      seen.vehicleID = "car-a"
      #expect(seen == render(original, at: time), "at \(time)")
    }
    // After the end nothing is planned.
    let late = core.planning(
      PlannedReassignment(after: .seconds(original.plan.completion + 1)), of: original)
    #expect(late.later.isEmpty)
  }

  @Test("a canceled trip keeps its vehicle and its intermediate destination index")
  func canceledKeepsIndex() throws {
    var record = try record(
      "providers/p/trips/three", threeStopTrip())
    let plan = record.plan
    let time = plan.departure(onLeg: 3) + 5  // on the way to the third intermediate destination
    #expect(render(record, at: time).intermediateDestinationIndex == 2)
    record.canceledAt = time
    let canceled = render(record, at: time + 100)
    #expect(canceled.tripStatus == .canceled && canceled.intermediateDestinationIndex == 2)
  }

  /// A SHARED trip `a` on `car-a`, and trip `b` joining its vehicle at simulated time
  /// `moment`: `a` as it was, `a` after the join, and `b`.
  func joined(at moment: Double) throws -> (TripRecord, TripRecord, TripRecord) {
    var trip = fastTrip(intermediate: false)
    trip.tripType = .shared
    trip.vehicleID = "car-a"
    let a = try record("providers/p/trips/a", trip)
    var second = FleetEngine.Trip()
    second.tripType = .shared
    second.numberOfPassengers = 2
    let (b, joinedA) = try core.join(
      try TripName(parsing: "providers/p/trips/b"), second, partner: a,
      now: core.clock.wallTime(at: moment, createdAt: a.createdAt))
    return (a, joinedA, b)
  }

  @Test(
    "a second rider joins before the first pickup: interleaved stops, one vehicle, the past kept")
  func joinBeforePickup() throws {
    let setOff = try record().plan.departure(onLeg: 0)
    let moment = setOff + 10
    let (a, joinedA, b) = try joined(at: moment)
    for time in stride(from: 0, to: moment, by: 3) {
      #expect(render(joinedA, at: time) == render(a, at: time), "at \(time)")
    }
    // (The join's moment went through wall nanoseconds: a moment later it has certainly come.)
    let joinTime = joinedA.later[0].start
    #expect(abs(joinTime - moment) < 1e-3 && b.creationTime == joinTime)
    let atJoin = render(joinedA, at: joinTime)
    let aBefore = render(a, at: joinTime)
    // The vehicle goes on to the pickup it was heading for: same route and version.
    #expect(atJoin.route == aBefore.route)
    #expect(atJoin.currentRouteSegmentVersion == aBefore.currentRouteSegmentVersion)
    #expect(atJoin.remainingWaypointsVersion != aBefore.remainingWaypointsVersion)

    let plan = b.plan
    let end = joinedA.assignment(1).plan.completion
    var statusesA: [FleetEngine.TripStatus] = []
    var statusesB: [FleetEngine.TripStatus] = []
    for time in stride(from: joinTime, through: plan.completion + 2, by: 1.5) {
      let tripA = render(joinedA, at: time)
      let tripB = render(b, at: time)
      if statusesA.last != tripA.tripStatus { statusesA.append(tripA.tripStatus) }
      if statusesB.last != tripB.tripStatus { statusesB.append(tripB.tripStatus) }
      #expect(tripA.vehicleID == "car-a" && tripB.vehicleID == "car-a")
      guard time < end else {
        #expect(tripA.tripStatus == .complete && tripA.remainingWaypoints.isEmpty)
        continue
      }
      // Both see the vehicle where it is and its next stop, whoever's it is; b's waypoints
      // run on past a's drop-off to its own.
      #expect(tripA.lastLocation?.location == tripB.lastLocation?.location, "at \(time)")
      #expect(tripA.etaToFirstWaypoint == tripB.etaToFirstWaypoint, "at \(time)")
      #expect(tripA.remainingWaypoints.first?.eta == tripA.etaToFirstWaypoint)
      #expect(
        Array(tripB.remainingWaypoints.prefix(tripA.remainingWaypoints.count))
          == tripA.remainingWaypoints, "at \(time)")
      #expect(tripB.remainingWaypoints.count == tripA.remainingWaypoints.count + 1)
      #expect(tripA.remainingWaypoints.last?.tripID == "a")
      #expect(tripB.remainingWaypoints.last?.tripID == "b")
    }
    let pickupAndDropoff: [FleetEngine.TripStatus] = [
      .enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff, .complete,
    ]
    #expect(statusesA == pickupAndDropoff)
    #expect(statusesB == pickupAndDropoff)

    // While the vehicle waits at b's pickup, a is on its way to its drop-off, whose
    // waypoint is b's first, with a's trip ID.
    let atSecondPickup = plan.arrival(atStop: 2) + 1
    let waitingA = render(joinedA, at: atSecondPickup)
    let waitingB = render(b, at: atSecondPickup)
    #expect(waitingA.tripStatus == .enrouteToDropoff && waitingB.tripStatus == .arrivedAtPickup)
    #expect(waitingA.remainingWaypoints.map(\.tripID) == ["a"])
    #expect(waitingB.remainingWaypoints.map(\.tripID) == ["a", "b"])
    #expect(waitingB.etaToFirstWaypoint == waitingB.remainingWaypoints[0].eta)
    #expect(b.numberOfPassengers == 2 && b.tripType == .shared)
  }

  @Test("a second rider joins after the first pickup: picked up next, dropped off after")
  func joinAfterPickup() throws {
    let plan = try record().plan
    let moment = plan.departure(onLeg: 1) + 15
    let (a, joinedA, b) = try joined(at: moment)
    #expect(render(joinedA, at: moment - 1) == render(a, at: moment - 1))
    let joinTime = joinedA.later[0].start
    let tripA = render(joinedA, at: joinTime)
    let tripB = render(b, at: joinTime)
    #expect(tripA.remainingWaypoints.map(\.tripID) == ["b", "a"])
    #expect(
      tripA.remainingWaypoints.map(\.waypointType) == [.pickupWaypointType, .dropOffWaypointType])
    #expect(tripB.remainingWaypoints.map(\.tripID) == ["b", "a", "b"])
    #expect(tripA.tripStatus == .enrouteToDropoff && tripB.tripStatus == .enrouteToPickup)
    // The vehicle turns towards b's pickup from where it is: a new route from that moment.
    let wallJoin = core.clock.wallTime(at: joinTime, createdAt: a.createdAt)
    #expect(tripA.currentRouteSegmentVersion == .init(nanosecondsSince1970: wallJoin))
    let position = GeoPoint(try #require(render(a, at: joinTime).lastLocation?.location))
    let joinedPosition = GeoPoint(try #require(tripA.lastLocation?.location))
    #expect(position.distance(to: joinedPosition) < 0.5)
    #expect(tripB.pickupTime != nil && tripA.pickupTime == render(a, at: joinTime).pickupTime)
  }

  @Test("when one rider leaves the vehicle, the other's plan drops its stops from that moment")
  func separate() throws {
    let moment = try record().plan.departure(onLeg: 0) + 5
    let (_, joinedA, b) = try joined(at: moment)
    let leaving = moment + 20
    let wall = core.clock.wallTime(at: leaving, createdAt: b.createdAt)
    let alone = try #require(core.separated(b, from: "a", now: wall))
    #expect(render(alone, at: leaving - 1) == render(b, at: leaving - 1))
    let after = render(alone, at: alone.later[0].start)
    #expect(after.remainingWaypoints.map(\.tripID) == ["b", "b"])
    #expect(after.tripStatus == .enrouteToPickup)
    let position = GeoPoint(
      try #require(render(b, at: alone.later[0].start).lastLocation?.location))
    #expect(position.distance(to: GeoPoint(try #require(after.lastLocation?.location))) < 0.5)
    let end = render(alone, at: alone.later[0].plan.completion + 1)
    #expect(end.tripStatus == .complete && end.lastLocation?.location == end.dropoffPoint?.point)
    // A trip whose vehicle has none of the leaving trip's stops left is not changed.
    #expect(core.separated(alone, from: "a", now: wall + 1_000_000) == nil)
    _ = joinedA
  }
}
