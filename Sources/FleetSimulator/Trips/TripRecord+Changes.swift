/// What changing a record's plan under way starts from, and the change itself.
extension TripRecord {
  /// Where the trip is at simulated time `time`: its state, the assignment in force, and the
  /// state on that assignment's plan's own clock (what a planner continues from).
  struct Progress {
    var state: TripState
    var assignment: Assignment
    var local: TripState
  }

  /// Where the trip is at simulated time `time` (not canceled then).
  func progress(atSimulatedTime time: Double) -> Progress {
    let state = state(atSimulatedTime: time)
    let assignment = assignment(state.assignment)
    return Progress(
      state: state, assignment: assignment,
      local: TripState(plan: assignment.plan, at: state.time - assignment.origin))
  }

  /// Makes the vehicle of `progress` follow `plan`, a continuation of its plan
  /// (``TripPlanner/continuation(of:at:through:tripID:seed:)``), from then on; anything
  /// planned for later is dropped.
  mutating func follow(_ plan: TripPlan, from progress: Progress, keepsRoute: Bool) {
    later.removeSubrange(progress.state.assignment...)
    later.append(
      Assignment(
        vehicleID: progress.assignment.vehicleID, plan: plan, start: progress.state.time,
        origin: progress.assignment.origin, changesRoute: !keepsRoute, changesWaypoints: true))
  }
}
