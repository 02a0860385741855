/// A vehicle and its plan for a trip, from a moment of the trip's life on.
///
/// A trip starts with one (``TripRecord/first``). Another follows when the trip is reassigned
/// to another vehicle, when a second rider's trip joins its vehicle, or when that other trip
/// leaves it; the trip's state at any time comes from the assignment in force then.
struct Assignment: Sendable {
  /// The vehicle serving the trip.
  var vehicleID: String
  /// The vehicle's route and timeline.
  var plan: TripPlan
  /// When it takes over, in simulated seconds on the trip's timeline.
  var start: Double
  /// Where the plan's time 0 falls on the trip's timeline: ``start`` for a vehicle that
  /// starts afresh, earlier for a plan that continues an earlier one (and keeps its past).
  var origin: Double
  /// Whether the current route changed when it took over (so its version is at least
  /// ``start``): false when the vehicle drives on towards the stop it was heading for.
  var changesRoute: Bool
  /// Whether the remaining waypoints changed when it took over (so their version is at
  /// least ``start``): false for a new vehicle ID on the same plan.
  var changesWaypoints: Bool

  /// The state of the trip at simulated time `time` (on the trip's timeline, at or after
  /// ``start``), canceled at `canceledAt` if at all, with its times on the trip's timeline.
  func state(at time: Double, canceledAt: Double?) -> TripState {
    let canceledAt = canceledAt.map { $0 - origin }
    var local = TripState(plan: plan, at: time - origin, canceledAt: canceledAt)
    // On the plan's clock, `time` can fall a rounding error short of the end of a phase that
    // has ended on the trip's: then it is the next phase, at its start. (Else a stream that
    // catches up phase by phase would look at the same moment for ever.)
    if local.phaseEnd + origin <= time {
      local = TripState(plan: plan, at: local.phaseEnd, canceledAt: canceledAt)
    }
    var state = local.shifted(by: origin)
    if changesRoute { state.routeVersion = max(state.routeVersion, start) }
    if changesWaypoints { state.waypointsVersion = max(state.waypointsVersion, start) }
    return state
  }
}

extension Assignment {
  /// The assignment a new trip starts with at its creation.
  init(vehicleID: String, plan: TripPlan) {
    self.init(
      vehicleID: vehicleID, plan: plan, start: 0, origin: 0, changesRoute: false,
      changesWaypoints: false)
  }
}
