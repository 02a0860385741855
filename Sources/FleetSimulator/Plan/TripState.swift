/// Everything observable about a simulated trip at one simulated moment, computed from its
/// plan: a pure function, so any number of callers may ask at any time.
///
/// The current route is quantised to the route point the vehicle passed last: it starts
/// there and runs to the end of the current leg, so it (and ``routeVersion``) changes when
/// the vehicle passes a point, not on every call. The vehicle's own position, the remaining
/// distance and the ETAs are exact.
///
/// So a state changes in two ways only: in steps at ``phaseEnd``, and, while the vehicle
/// drives (``isMoving``), continuously in ``position`` and ``remainingMeters`` and at each
/// route point passed in the route and heading. A standing vehicle's state stays as it is,
/// ``time`` aside, until the phase ends (``TripRenderer/nextChange(of:)`` adds the traffic).
///
/// Made from one plan, its times count from the plan's time 0; ``TripRecord`` moves them onto
/// the trip's timeline (``shifted(by:)``) when the plan is a later one.
struct TripState: Sendable {
  /// The phase, and when it started and ends (simulated seconds from creation).
  var phase: TripPhase
  var phaseStart: Double
  var phaseEnd: Double
  /// The simulated time this state is for.
  var time: Double
  /// Where the vehicle is.
  var position: GeoPoint
  /// The vehicle's compass heading in degrees.
  var heading: Double
  /// Whether the vehicle is driving (else it stands).
  var isMoving: Bool
  /// The leg whose route is current: the one being driven, or the next one while the trip is
  /// NEW or waiting at a stop; nil once the trip has ended.
  var currentLeg: Int?
  /// The route index where the current route starts (the point passed last).
  var routeStart: Int
  /// Metres left from the vehicle's position to the end of the current leg.
  var remainingMeters: Double
  /// When the current route last changed (simulated seconds).
  var routeVersion: Double
  /// When the list of remaining stops last changed (simulated seconds).
  var waypointsVersion: Double
  /// The next stop the vehicle will reach; nil once the trip has ended.
  var nextStop: Int?
  /// Which of the trip's assignments (``TripRecord/assignment(_:)``) the state is of: 0, the
  /// first, unless the trip was reassigned or its vehicle's plan changed.
  var assignment = 0

  /// The state of `plan` at simulated time `time`, for a trip canceled at `canceledAt` (if at
  /// all).
  init(plan: TripPlan, at time: Double, canceledAt: Double? = nil) {
    guard let canceledAt, time >= canceledAt else {
      self.init(active: plan, at: time)
      return
    }
    // Frozen where and as it was when canceled.
    self.init(active: plan, at: canceledAt)
    self.time = time
    phase = .canceled
    phaseStart = canceledAt
    phaseEnd = .infinity
    isMoving = false
    currentLeg = nil
    remainingMeters = 0
    routeVersion = canceledAt
    waypointsVersion = canceledAt
    nextStop = nil
  }

  /// The state at `time` of a trip that was not canceled.
  private init(active plan: TripPlan, at time: Double) {
    let (phase, start, end) = plan.phase(at: time)
    self.phase = phase
    self.phaseStart = start
    self.phaseEnd = end
    self.time = time
    let route = plan.route
    switch phase {
    case .new:
      let origin = plan.routeIndex(ofStop: 0)
      position = route.point(origin)
      heading = Self.heading(route, at: origin)
      isMoving = false
      currentLeg = 0
      routeStart = origin
      remainingMeters = plan.length(ofLeg: 0)
      routeVersion = 0
      waypointsVersion = 0
      nextStop = 1
    case .enroute(let leg):
      let first = plan.routeIndex(ofStop: leg)
      let last = plan.routeIndex(ofStop: leg + 1)
      let along = min(
        route.distance(at: first) + (time - start) * Double(plan.speed), route.distance(at: last))
      let passed = route.lastIndex(atOrBefore: along, in: first...last)
      if passed < last {
        let span = route.distance(at: passed + 1) - route.distance(at: passed)
        let fraction = span > 0 ? (along - route.distance(at: passed)) / span : 0
        position = route.point(passed).interpolated(to: route.point(passed + 1), fraction: fraction)
      } else {
        position = route.point(last)
      }
      heading = Self.heading(route, at: min(passed, last - 1))
      isMoving = true
      currentLeg = leg
      routeStart = passed
      remainingMeters = route.distance(at: last) - along
      // The leg became the current route on arrival at its first stop (at creation for the
      // first leg); after that the route changes each time a point is passed.
      let legBecameCurrent = leg == 0 ? 0 : plan.arrival(atStop: leg)
      routeVersion =
        passed == first
        ? legBecameCurrent
        : start + (route.distance(at: passed) - route.distance(at: first)) / Double(plan.speed)
      waypointsVersion = leg == 0 ? 0 : plan.arrival(atStop: leg)
      nextStop = leg + 1
    case .arrived(let stop):
      let index = plan.routeIndex(ofStop: stop)
      position = route.point(index)
      heading = Self.heading(route, at: max(index - 1, 0))
      isMoving = false
      currentLeg = stop
      routeStart = index
      remainingMeters = plan.length(ofLeg: stop)
      routeVersion = start
      waypointsVersion = start
      nextStop = stop + 1
    case .complete, .canceled:
      let index = plan.routeIndex(ofStop: plan.dropoffStop)
      position = route.point(index)
      heading = Self.heading(route, at: max(index - 1, 0))
      isMoving = false
      currentLeg = nil
      routeStart = index
      remainingMeters = 0
      routeVersion = start
      waypointsVersion = start
      nextStop = nil
    }
  }

  /// The state with its times moved `offset` simulated seconds later: the state of a plan
  /// whose time 0 falls at `offset` on the trip's timeline.
  func shifted(by offset: Double) -> TripState {
    guard offset != 0 else { return self }
    var state = self
    state.phaseStart += offset
    state.phaseEnd += offset
    state.time += offset
    state.routeVersion += offset
    state.waypointsVersion += offset
    return state
  }

  /// The heading of the route's segment from `index` to the next point.
  private static func heading(_ route: RoutePolyline, at index: Int) -> Double {
    guard index + 1 < route.count else { return 0 }
    return route.point(index).bearing(to: route.point(index + 1))
  }

  /// The route index where the current route ends (the end of the current leg).
  func routeEnd(_ plan: TripPlan) -> Int? {
    currentLeg.map { plan.routeIndex(ofStop: $0 + 1) }
  }
}
