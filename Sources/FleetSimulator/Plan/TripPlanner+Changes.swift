/// Plans that change while a trip is under way: a new vehicle taking it over, and a vehicle
/// whose stops change because a second rider's trip joins it or leaves it.
extension TripPlanner {
  /// A stop a changed plan is still to make.
  struct PlannedStop: Equatable {
    var point: GeoPoint
    var role: StopRole
  }

  /// How far, in metres as the crow flies, a second rider's generated pickup and drop-off
  /// are from the first rider's.
  static let partnerStopDistance = 300.0...800.0

  /// The stops of `plan` from stop `first` on, as ``PlannedStop``s, with `tripID` the
  /// plan's own trip.
  func stops(of plan: TripPlan, from first: Int, tripID: String) -> [PlannedStop] {
    (first..<plan.stopCount).map {
      PlannedStop(point: plan.location(ofStop: $0), role: plan.role(ofStop: $0, tripID: tripID))
    }
  }

  /// The plan of `plan`'s vehicle, in `state` (of `plan`, not ended), that drives from where
  /// it is through `stops`, in order, for trip `tripID`; whether it keeps the current route.
  ///
  /// Everything up to `state` stays as it was — the route driven, the stops made, the
  /// timings and the traffic — so the trip's past looks the same. When the first of `stops`
  /// is the stop the vehicle was heading for, the route goes on to it as before; otherwise it
  /// turns towards it from where the vehicle is. The rest of the route is laid afresh,
  /// seeded by `seed`.
  func continuation(
    of plan: TripPlan, at state: TripState, through stops: [PlannedStop], tripID: String,
    seed: String
  ) -> (plan: TripPlan, keepsRoute: Bool) {
    // The last stop the vehicle reached (or stands at).
    let reached: Int
    var driving = false
    switch state.phase {
    case .new: reached = 0
    case .enroute(let leg):
      reached = leg
      driving = true
    case .arrived(let stop): reached = stop
    case .complete, .canceled: reached = plan.dropoffStop
    }
    let next = reached + 1
    let keepsNext =
      next < plan.stopCount && stops.first?.role == plan.role(ofStop: next, tripID: tripID)
    let keptThrough =
      keepsNext
      ? plan.routeIndex(ofStop: next)
      : driving ? state.routeStart : plan.routeIndex(ofStop: reached)
    var route = RoutePolyline()
    for index in 0...keptThrough { route.append(plan.route.point(index)) }
    var stopIndices = ContiguousArray(plan.stopIndices[0...reached])
    var roles = (0...reached).map { plan.role(ofStop: $0, tripID: tripID) }
    var ahead = stops[...]
    if keepsNext {
      stopIndices.append(Int32(keptThrough))
      roles.append(stops[0].role)
      ahead = stops.dropFirst()
    } else if driving {
      route.append(state.position)
    }
    var random = SplitMix64(seed: options.seed ^ SplitMix64.hash(seed))
    var previous = route.point(route.count - 1)
    for stop in ahead {
      appendStreets(from: previous, to: stop.point, &random, into: &route)
      stopIndices.append(Int32(route.count - 1))
      roles.append(stop.role)
      previous = route.point(route.count - 1)
    }
    route.shrinkToFit()
    var continued = plan
    continued.route = route
    continued.stopIndices = stopIndices
    continued.sharing = SharedStops(roles: roles, ownTripID: tripID)
    return (continued, keepsNext)
  }

  /// The plan of vehicle `vehicleID` taking trip `name` (ID `tripID`) over from `plan`'s
  /// vehicle at `plan`'s time `time`, before the pickup: it starts afresh some blocks from
  /// the pickup (a place that depends on the trip and the vehicle only), sets off at once —
  /// or when the trip would have, while it is still NEW — and makes the trip's own stops.
  /// Its times count from `time`.
  func reassignment(
    of plan: TripPlan, at time: Double, name: String, tripID: String, vehicleID: String
  ) -> TripPlan {
    var random = SplitMix64(seed: options.seed ^ SplitMix64.hash(name + "\n" + vehicleID))
    let pickupStop = plan.pickupStop
    let pickup = plan.location(ofStop: pickupStop)
    let start = randomPoint(around: pickup, at: options.vehicleStartDistance, &random)
    var reassigned: TripPlan
    if plan.sharing == nil {
      // Every stop is the trip's own: from the pickup on, the route stays as it was.
      var route = RoutePolyline()
      route.append(start)
      appendStreets(from: start, to: pickup, &random, into: &route)
      let shift = Int32(route.count - 1) - plan.stopIndices[1]
      for index in (plan.routeIndex(ofStop: 1) + 1)..<plan.route.count {
        route.append(plan.route.point(index))
      }
      route.shrinkToFit()
      reassigned = plan
      reassigned.route = route
      reassigned.stopIndices = [0] + plan.stopIndices.dropFirst().map { $0 + shift }
    } else {
      // A shared ride's trip leaves it: the new vehicle makes this trip's stops only.
      let own = (pickupStop..<plan.stopCount).filter { plan.isOwn($0) }
      reassigned = self.plan(
        Stops(points: [start] + own.map { plan.location(ofStop: $0) }, random: random))
    }
    reassigned.newDuration = Float(max(0, Double(plan.newDuration) - time))
    reassigned.trafficSeed = random.next()
    return reassigned
  }

  /// Where a second rider's trip `name` is picked up and dropped off: at `pickup` and
  /// `dropoff` when given, else some blocks from the first rider's (`nearPickup`,
  /// `nearDropoff`).
  func partnerStops(
    name: String, nearPickup: GeoPoint, nearDropoff: GeoPoint, pickup: GeoPoint?,
    dropoff: GeoPoint?
  ) -> (pickup: GeoPoint, dropoff: GeoPoint) {
    var random = SplitMix64(seed: options.seed ^ SplitMix64.hash(name))
    let generatedPickup = randomPoint(around: nearPickup, at: Self.partnerStopDistance, &random)
    let generatedDropoff = randomPoint(around: nearDropoff, at: Self.partnerStopDistance, &random)
    return (pickup ?? generatedPickup, dropoff ?? generatedDropoff)
  }
}
