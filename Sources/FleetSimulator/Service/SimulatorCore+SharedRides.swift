internal import FleetProtos
internal import GRPCWire

/// Shared rides: two SHARED trips on one vehicle, whose plan interleaves both trips' stops —
/// first rider's pickup, second rider's pickup, first rider's drop-off, second rider's
/// drop-off — so that each trip's remaining waypoints show the other's stops on the way.
extension SimulatorCore {
  /// The trip a new SHARED trip named `name` on vehicle `vehicleID` joins at wall time `now`:
  /// the vehicle's active SHARED trip of the same provider whose vehicle carries no other;
  /// nil when it has none. Throws FAILED_PRECONDITION when the vehicle's shared trips already
  /// have two riders.
  func sharedPartner(for name: TripName, vehicleID: String, now: Int64) throws(RPCError)
    -> TripRecord?
  {
    let prefix = "providers/\(name.providerID)/trips/"
    var full: [String] = []
    for record in store.records(vehicleID: vehicleID)
    where record.name.hasPrefix(prefix) && record.tripType == .shared {
      let state = record.state(at: now, clock: clock)
      guard !state.phase.isTerminal, record.vehicleID(in: state) == vehicleID,
        let nextStop = state.nextStop
      else { continue }
      let plan = record.assignment(state.assignment).plan
      if Self.otherTrips(plan, from: nextStop).isEmpty { return record }
      full.append(String(record.tripID))
    }
    guard full.isEmpty else {
      throw FleetEngineError.make(
        .failedPrecondition,
        "vehicle \(vehicleID) already carries two riders (shared trips "
          + "\(full.joined(separator: ", "))); the simulator seats two shared trips per "
          + "vehicle: name another vehicle, or none",
        reason: "VEHICLE_FULL", metadata: ["vehicle_id": vehicleID])
    }
    return nil
  }

  /// The records of a new SHARED trip `name` (`trip` as CreateTrip gives it) joining
  /// `partner`'s vehicle at wall time `now`, and of `partner` as it then is.
  ///
  /// The new trip takes `partner`'s timeline (``TripRecord``). Its pickup and drop-off are the
  /// request's, or some blocks from the partner's; the vehicle picks it up after the partner's
  /// pickup (at once when that is behind) and drops it off after the partner's drop-off.
  func join(_ name: TripName, _ trip: FleetEngine.Trip, partner: TripRecord, now: Int64)
    throws(RPCError) -> (joined: TripRecord, partner: TripRecord)
  {
    let progress = partner.progress(
      atSimulatedTime: clock.simulatedTime(at: now, createdAt: partner.createdAt))
    let (current, local) = (progress.assignment, progress.local)
    let plan = current.plan
    let partnerID = String(partner.tripID)
    let tripID = name.tripID
    let (pickup, dropoff) = planner.partnerStops(
      name: name.description, nearPickup: plan.location(ofStop: plan.pickupStop),
      nearDropoff: plan.location(ofStop: plan.dropoffStop),
      pickup: trip.pickupPoint?.point.map(GeoPoint.init),
      dropoff: trip.dropoffPoint?.point.map(GeoPoint.init))
    let remaining = planner.stops(
      of: plan, from: local.nextStop ?? plan.stopCount, tripID: partnerID)
    let newPickup = TripPlanner.PlannedStop(
      point: pickup, role: StopRole(kind: .pickup, tripID: tripID))
    let newDropoff = TripPlanner.PlannedStop(
      point: dropoff, role: StopRole(kind: .dropoff, tripID: tripID))
    var stops = remaining
    stops.insert(newPickup, at: remaining.first?.role.kind == .pickup ? 1 : 0)
    stops.append(newDropoff)
    var previous = local.position
    for stop in stops {
      guard previous.distance(to: stop.point) <= Self.maximumStopDistance else {
        throw FleetEngineError.invalidArgument(
          field: "trip",
          "the shared ride's consecutive stops would be more than "
            + "\(Int(Self.maximumStopDistance / 1000)) km apart; the simulator drives city trips")
      }
      previous = stop.point
    }
    let (continued, keepsRoute) = planner.continuation(
      of: plan, at: local, through: stops, tripID: partnerID, seed: name.description)
    var joinedPartner = partner
    joinedPartner.follow(continued, from: progress, keepsRoute: keepsRoute)
    var ownView = continued
    ownView.sharing = continued.sharing?.seen(by: tripID)
    var joined = TripRecord(
      name: name.description, vehicleID: current.vehicleID, tripType: .shared,
      numberOfPassengers: trip.numberOfPassengers, attributes: trip.attributes, plan: ownView,
      createdAt: partner.createdAt)
    // Created now, on the partner's timeline: everything it shows is new from now on.
    joined.first = Assignment(
      vehicleID: current.vehicleID, plan: ownView, start: progress.state.time,
      origin: current.origin, changesRoute: true, changesWaypoints: true)
    return (joined, joinedPartner)
  }

  /// `partner` with the stops of trip `leavingID`, which left its vehicle, taken out of the
  /// vehicle's plan from wall time `now` on: it drives from where it is through the stops it
  /// has left. nil when `partner` has ended or its vehicle has none of those stops left.
  func separated(_ partner: TripRecord, from leavingID: String, now: Int64) -> TripRecord? {
    let progress = partner.progress(
      atSimulatedTime: clock.simulatedTime(at: now, createdAt: partner.createdAt))
    let plan = progress.assignment.plan
    guard !progress.state.phase.isTerminal, let nextStop = progress.local.nextStop,
      Self.otherTrips(plan, from: nextStop).contains(leavingID)
    else { return nil }
    let partnerID = String(partner.tripID)
    let stops = planner.stops(of: plan, from: nextStop, tripID: partnerID).filter {
      $0.role.tripID != leavingID
    }
    let (continued, keepsRoute) = planner.continuation(
      of: plan, at: progress.local, through: stops, tripID: partnerID,
      seed: "\(partner.name)\n\(leavingID)")
    var separated = partner
    separated.follow(continued, from: progress, keepsRoute: keepsRoute)
    return separated
  }

  /// Two SHARED trips `first` and `second` made up together at wall time `now`, on one
  /// vehicle (`vehicleID`): generated stops for the first, the second's some blocks from
  /// them, one plan through [vehicle start, first pickup, second pickup, first drop-off,
  /// second drop-off]. One and two passengers.
  func makeSharedPair(_ first: TripName, _ second: TripName, vehicleID: String, now: Int64)
    -> [TripRecord]
  {
    let stops = planner.stops(
      name: first.description, pickup: nil, intermediates: [], dropoff: nil)
    let (start, pickup, dropoff) = (stops.points[0], stops.points[1], stops.points[2])
    let partner = planner.partnerStops(
      name: second.description, nearPickup: pickup, nearDropoff: dropoff, pickup: nil,
      dropoff: nil)
    var plan = planner.plan(
      TripPlanner.Stops(
        points: [start, pickup, partner.pickup, dropoff, partner.dropoff], random: stops.random))
    let roles = [
      StopRole(kind: .vehicleStart, tripID: first.tripID),
      StopRole(kind: .pickup, tripID: first.tripID),
      StopRole(kind: .pickup, tripID: second.tripID),
      StopRole(kind: .dropoff, tripID: first.tripID),
      StopRole(kind: .dropoff, tripID: second.tripID),
    ]
    return [(first, 1), (second, 2)].map { name, passengers in
      plan.sharing = SharedStops(roles: roles, ownTripID: name.tripID)
      return TripRecord(
        name: name.description, vehicleID: vehicleID, tripType: .shared,
        numberOfPassengers: Int32(passengers), attributes: [], plan: plan, createdAt: now)
    }
  }
}
