internal import FleetProtos
internal import GRPCWire

/// Vehicle reassignment, by UpdateTrip or planned when a trip is made up, and UpdateTrip's
/// changes to a stored trip.
extension SimulatorCore {
  /// How often UpdateTrip and CreateTrip read a trip again when another change came first.
  static let commitAttempts = 8

  /// `record` reassigned to vehicle `vehicleID` at simulated time `time` (the trip not ended
  /// then); any reassignment planned after `time` is dropped.
  ///
  /// Before the vehicle reached the pickup, the new vehicle starts afresh some blocks from it
  /// (``TripPlanner/reassignment(of:at:name:tripID:vehicleID:)``). From the pickup on it takes
  /// over where the old one is: it drives on as planned, or, when the old vehicle also served
  /// another trip, straight on through this trip's own remaining stops.
  func reassigned(_ record: TripRecord, to vehicleID: String, at time: Double) -> TripRecord {
    var record = record
    let progress = record.progress(atSimulatedTime: time)
    let (state, current, local) = (progress.state, progress.assignment, progress.local)
    let plan = current.plan
    let tripID = String(record.tripID)
    record.later.removeSubrange(state.assignment...)
    var next = current
    next.vehicleID = vehicleID
    next.start = state.time
    if let nextStop = local.nextStop, nextStop <= plan.pickupStop {
      next.plan = planner.reassignment(
        of: plan, at: local.time, name: record.name, tripID: tripID, vehicleID: vehicleID)
      next.origin = state.time
      next.changesRoute = true
      next.changesWaypoints = true
    } else if let nextStop = local.nextStop, Self.otherTrips(plan, from: nextStop).count > 0 {
      let own = planner.stops(of: plan, from: nextStop, tripID: tripID).filter {
        $0.role.tripID == tripID
      }
      let (continued, keepsRoute) = planner.continuation(
        of: plan, at: local, through: own, tripID: tripID, seed: "\(record.name)\n\(vehicleID)")
      next.plan = continued
      next.changesRoute = !keepsRoute
      next.changesWaypoints = true
    } else {
      // The same plan with another vehicle ID: nothing else changes.
      next.changesRoute = false
      next.changesWaypoints = false
    }
    record.later.append(next)
    return record
  }

  /// The IDs of the trips other than `plan`'s own whose stops its vehicle still has to make
  /// from stop `first` on.
  static func otherTrips(_ plan: TripPlan, from first: Int) -> [String] {
    var ids: [String] = []
    for stop in first..<plan.stopCount {
      if let id = plan.otherTripID(ofStop: stop), !ids.contains(id) { ids.append(id) }
    }
    return ids
  }

  /// `record` with a reassignment planned by `reassignment` (see ``PlannedReassignment``);
  /// as it is when the reassignment would come after the trip's end.
  func planning(_ reassignment: PlannedReassignment, of record: TripRecord) -> TripRecord {
    let plan = record.plan
    let time =
      reassignment.after.map(\.seconds)
      ?? Double(plan.newDuration) + plan.duration(ofLeg: 0) / 2
    guard time < plan.completion else { return record }
    // An empty ID is given a new simulated vehicle when the record is stored.
    return reassigned(record, to: reassignment.vehicleID ?? "", at: time)
  }

  /// Applies UpdateTrip's `update` for the mask `paths` to trip `name` at wall time `now`,
  /// with what it does to a trip sharing its vehicle, and returns the stored record.
  ///
  /// Throws NOT_FOUND, FAILED_PRECONDITION for a reassignment or cancelation of a trip that
  /// has ended, and ABORTED when other changes kept coming first.
  func updateTrip(
    _ name: String, paths: [String], _ update: FleetEngine.Trip, now: Int64
  ) throws(RPCError) -> TripRecord {
    for _ in 0..<Self.commitAttempts {
      guard var record = store.record(named: name) else {
        throw FleetEngineError.tripNotFound(name)
      }
      let time = clock.simulatedTime(at: now, createdAt: record.createdAt)
      let state = record.state(atSimulatedTime: time)
      let plan = record.assignment(state.assignment).plan
      // The trips whose stops this one's vehicle makes too: they lose this trip's stops when
      // it leaves the vehicle.
      let partners = state.nextStop.map { Self.otherTrips(plan, from: $0) } ?? []
      var leaves = false
      if paths.contains("vehicle_id") && update.vehicleID != record.vehicleID(in: state) {
        try Self.requireActive(record, state)
        record = reassigned(record, to: update.vehicleID, at: state.time)
        leaves = true
      }
      if paths.contains("trip_status") {
        try Self.requireActive(record, state)
        record.canceledAt = state.time
        record.later.removeAll { $0.start > state.time }
        leaves = true
      }
      if paths.contains("number_of_passengers") {
        record.numberOfPassengers = update.numberOfPassengers
      }
      if paths.contains("attributes") { record.attributes = update.attributes }
      var changed = [record]
      if leaves {
        let prefix = name[...name.lastIndex(of: "/")!]
        for partnerID in partners {
          guard let partner = store.record(named: prefix + partnerID),
            let separated = separated(partner, from: String(record.tripID), now: now)
          else { continue }
          changed.append(separated)
        }
      }
      if let stored = try store.commit(changed) { return stored[0] }
    }
    throw FleetEngineError.make(
      .aborted, "trip \(name) kept changing while it was updated; try again",
      reason: "CONCURRENT_UPDATE", metadata: ["trip": name])
  }

  /// FAILED_PRECONDITION when `record` has ended in `state`.
  private static func requireActive(_ record: TripRecord, _ state: TripState) throws(RPCError) {
    guard state.phase.isTerminal else { return }
    throw FleetEngineError.make(
      .failedPrecondition,
      "trip \(record.name) has already ended (\(record.status(in: state)))",
      reason: "TRIP_ALREADY_ENDED", metadata: ["trip": record.name])
  }
}
