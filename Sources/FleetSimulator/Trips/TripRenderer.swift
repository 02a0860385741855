internal import FleetProtos

/// Turns a stored trip and a moment into the `maps.fleetengine.v1.Trip` a caller sees, as
/// Fleet Engine answers a consumer.
///
/// Versions are wall-clock timestamps of when each part last changed: the route
/// (`current_route_segment_version`) when the vehicle passed a route point or a leg began;
/// the traffic when the route or the traffic period changed; the remaining waypoints at each
/// stop; their paths and traffic with the traffic or the waypoints. A change of plan
/// (``Assignment``) counts for the parts it changes. A part is left out when the caller
/// already holds its current version; the versions themselves are always sent.
///
/// A trip whose vehicle serves another trip too shows the vehicle's next stop first, whoever's
/// it is, and its remaining waypoints run through the other trip's stops to its own drop-off.
struct TripRenderer: Sendable {
  let clock: SimulationClock
  /// The traffic period in simulated seconds.
  let trafficPeriod: Double

  /// Versions, in wall nanoseconds, of the versioned parts at one moment.
  struct Versions: Equatable {
    var route: Int64
    var traffic: Int64
    var waypoints: Int64
    var waypointsRoute: Int64
  }

  /// Trip `record` at wall time `wall`, or at simulated time `time` with `wall` its wall time.
  func render(
    _ record: TripRecord, at wall: Int64, simulatedTime time: Double? = nil,
    options: RenderOptions
  ) -> FleetEngine.Trip {
    let state = record.state(
      atSimulatedTime: time ?? clock.simulatedTime(at: wall, createdAt: record.createdAt))
    let assignment = record.assignment(state.assignment)
    let plan = assignment.plan
    // The plan counts from its own time 0; the trip's timeline from `origin` before that.
    let origin = assignment.origin
    let timestamp = { (time: Double) in
      GoogleProtobuf.Timestamp(
        nanosecondsSince1970: clock.wallTime(at: time, createdAt: record.createdAt))
    }
    let versions = self.versions(of: state, record)
    var trip = FleetEngine.Trip()
    trip.name = record.name
    trip.vehicleID = assignment.vehicleID
    trip.tripStatus = Self.status(of: state.phase, plan)
    trip.tripType = record.tripType
    trip.numberOfPassengers = record.numberOfPassengers
    trip.attributes = record.attributes
    trip.view = options.view == .unspecified ? .sdk : options.view
    trip.pickupPoint = Self.terminal(plan.location(ofStop: plan.pickupStop))
    trip.dropoffPoint = Self.terminal(plan.location(ofStop: plan.dropoffStop))
    trip.intermediateDestinations = plan.intermediateStops.map {
      Self.terminal(plan.location(ofStop: $0))
    }
    trip.intermediateDestinationsVersion = timestamp(record.creationTime)
    trip.intermediateDestinationIndex = Self.intermediateIndex(
      of: state.phase == .canceled
        ? plan.phase(at: record.canceledAt.map { $0 - origin } ?? 0).phase : state.phase, plan)
    // Planned until reached, actual afterwards; absent when the trip was canceled first.
    let pickupArrival = origin + plan.arrival(atStop: plan.pickupStop)
    let dropoffArrival = origin + plan.completion
    if record.canceledAt.map({ $0 >= pickupArrival }) ?? true {
      trip.pickupTime = timestamp(pickupArrival)
    }
    if record.canceledAt.map({ $0 >= dropoffArrival }) ?? true {
      trip.dropoffTime = timestamp(dropoffArrival)
    }

    trip.currentRouteSegmentVersion = .init(nanosecondsSince1970: versions.route)
    trip.currentRouteSegmentTrafficVersion = .init(nanosecondsSince1970: versions.traffic)
    trip.remainingWaypointsVersion = .init(nanosecondsSince1970: versions.waypoints)
    trip.remainingWaypointsRouteVersion = .init(nanosecondsSince1970: versions.waypointsRoute)
    let sendRoute = !Self.holds(options.heldRouteVersion, versions.route)
    let sendTraffic = !Self.holds(options.heldTrafficVersion, versions.traffic)
    let sendWaypointPaths = !Self.holds(options.heldWaypointsRouteVersion, versions.waypointsRoute)
    let renderWall = clock.wallTime(at: state.time, createdAt: record.createdAt)

    if let leg = state.currentLeg, let nextStop = state.nextStop {
      let tripID = String(record.tripID)
      // Built only when some of it goes out: a caller that holds the current versions (a
      // stream, after its first update) gets none of it.
      let currentPath =
        sendRoute || sendTraffic || sendWaypointPaths
        ? path(plan, from: state.routeStart, to: plan.routeIndex(ofStop: leg + 1), state) : nil
      if sendRoute, let currentPath {
        switch options.routeFormat {
        case .encodedPolylineType: trip.currentRouteSegment = currentPath.encoded
        case .latLngListType, .unknownFormatType, .unrecognized:
          trip.route = currentPath.points.map(\.latLng)
        }
      }
      if sendTraffic { trip.currentRouteSegmentTraffic = currentPath?.traffic }
      trip.currentRouteSegmentEndPoint = waypoint(stop: leg + 1, tripID, plan)
      trip.remainingDistanceMeters = Int32(state.remainingMeters.rounded())
      // The vehicle's next stop, whichever trip it is for.
      let arrival = origin + plan.arrival(atStop: nextStop)
      trip.etaToFirstWaypoint = timestamp(arrival)
      trip.remainingTimeToFirstWaypoint = GoogleProtobuf.Duration(
        .nanoseconds(max(0, clock.wallTime(at: arrival, createdAt: record.createdAt) - renderWall)))
      trip.lastLocationSnappable = true
      // Up to this trip's drop-off, stops of another trip on the way included.
      trip.remainingWaypoints = waypoints(
        tripID, record, assignment, state, from: nextStop, through: plan.dropoffStop,
        currentPath: sendWaypointPaths ? currentPath : nil)
      if options.includeVehicleWaypoints {
        // Every stop the vehicle has left, whoever's, without paths.
        trip.vehicleWaypoints = waypoints(
          tripID, record, assignment, state, from: nextStop, through: plan.stopCount - 1,
          currentPath: nil)
      }
    }

    trip.lastLocation = vehicleLocation(state, plan, at: renderWall)
    return trip
  }

  /// A stretch of route with its encoding and traffic.
  private struct Path {
    var points: [GeoPoint]
    var encoded: String
    var traffic: FleetEngine.ConsumableTrafficPolyline
  }

  /// The route from index `start` to `end` at the traffic of `state`.
  private func path(_ plan: TripPlan, from start: Int, to end: Int, _ state: TripState) -> Path {
    let points = (start...end).map { plan.route.point($0) }
    let encoded = PolylineEncoding.encode(points)
    return Path(
      points: points, encoded: encoded,
      traffic: traffic(plan, from: start, to: end, state, encoded))
  }

  /// The stops from `first` through `last` of trip `tripID` with their distances, ETAs and
  /// travel times, and, when given `currentPath` (the first one's path), their paths and
  /// traffic.
  private func waypoints(
    _ tripID: String, _ record: TripRecord, _ assignment: Assignment, _ state: TripState,
    from first: Int, through last: Int, currentPath: Path?
  ) -> [FleetEngine.TripWaypoint] {
    let plan = assignment.plan
    let origin = assignment.origin
    return (first...last).map { stop in
      var waypoint = waypoint(stop: stop, tripID, plan)
      let isFirst = stop == first
      waypoint.distanceMeters = Int32(
        (isFirst ? state.remainingMeters : plan.length(ofLeg: stop - 1)).rounded())
      waypoint.eta = GoogleProtobuf.Timestamp(
        nanosecondsSince1970: clock.wallTime(
          at: origin + plan.arrival(atStop: stop), createdAt: record.createdAt))
      // Travel from the previous stop (from here, for the first), in real time like the ETAs.
      let travel =
        isFirst
        ? origin + plan.arrival(atStop: stop) - state.time : plan.duration(ofLeg: stop - 1)
      waypoint.duration = GoogleProtobuf.Duration(
        .nanoseconds(Int64((max(0, travel) / clock.timeScale * 1e9).rounded())))
      guard let currentPath else { return waypoint }
      let path =
        isFirst
        ? currentPath
        : self.path(
          plan, from: plan.routeIndex(ofStop: stop - 1), to: plan.routeIndex(ofStop: stop), state)
      waypoint.pathToWaypoint = path.points.map(\.latLng)
      waypoint.encodedPathToWaypoint = path.encoded
      waypoint.trafficToWaypoint = path.traffic
      return waypoint
    }
  }

  /// The vehicle as its driver app would last have reported it, at wall time `wall`.
  private func vehicleLocation(_ state: TripState, _ plan: TripPlan, at wall: Int64)
    -> FleetEngine.VehicleLocation
  {
    var location = FleetEngine.VehicleLocation()
    location.location = state.position.latLng
    location.heading = Int32(state.heading.rounded()) % 360
    location.speed = state.isMoving ? Double(plan.speed) : 0
    location.latlngAccuracy = 5
    location.headingAccuracy = 10
    location.isRoadSnapped = true
    location.locationSensor = .gps
    location.updateTime = .init(nanosecondsSince1970: wall)
    location.serverTime = .init(nanosecondsSince1970: wall)
    return location
  }

  /// The versions of the versioned parts in `state`.
  func versions(of state: TripState, _ record: TripRecord) -> Versions {
    let wall = { (time: Double) in self.clock.wallTime(at: time, createdAt: record.createdAt) }
    let route = wall(state.routeVersion)
    // Traffic is drawn afresh each period, and its indices count from the route's start, so
    // it changes with either; an ended trip has neither.
    let traffic =
      state.phase.isTerminal
      ? route : max(route, wall(Double(trafficPeriodNumber(state)) * trafficPeriod))
    // The waypoints' paths change with the route and traffic, and when stops come or go.
    let waypoints = wall(state.waypointsVersion)
    return Versions(
      route: route, traffic: traffic, waypoints: waypoints,
      waypointsRoute: max(traffic, waypoints))
  }

  /// The simulated time at which what ``render(_:at:simulatedTime:options:)`` shows of a trip
  /// in `state` next changes in a step, unless the trip is updated: the end of the phase, or
  /// the start of the next traffic period (new traffic and versions); `.infinity` once the
  /// trip has ended.
  ///
  /// Not counted are the parts that change at every instant: the fields that tell the time
  /// (the remaining durations, the location's timestamps) and, while the vehicle drives
  /// (``TripState/isMoving``), its position and the remaining distance, with the route and
  /// heading at each route point passed. Between now and then, everything else stays as it
  /// is.
  func nextChange(of state: TripState) -> Double {
    guard !state.phase.isTerminal else { return .infinity }
    let nextPeriod = Double(trafficPeriodNumber(state) + 1) * trafficPeriod
    return min(state.phaseEnd, nextPeriod)
  }

  private func trafficPeriodNumber(_ state: TripState) -> Int {
    Int((state.time / trafficPeriod).rounded(.down))
  }

  private func traffic(
    _ plan: TripPlan, from start: Int, to end: Int, _ state: TripState, _ encoded: String
  ) -> FleetEngine.ConsumableTrafficPolyline {
    var traffic = FleetEngine.ConsumableTrafficPolyline()
    traffic.speedReadingInterval = TrafficModel.intervals(
      seed: plan.trafficSeed, from: start, to: end, period: trafficPeriodNumber(state))
    traffic.encodedPathToWaypoint = encoded
    return traffic
  }

  /// Whether a caller holding `held` already has the part at `current`.
  private static func holds(_ held: Int64?, _ current: Int64) -> Bool {
    guard let held else { return false }
    return held >= current
  }

  /// Stop `stop` as a waypoint, for trip `tripID` unless it is another trip's.
  private func waypoint(stop: Int, _ tripID: String, _ plan: TripPlan) -> FleetEngine.TripWaypoint {
    var waypoint = FleetEngine.TripWaypoint()
    waypoint.location = Self.terminal(plan.location(ofStop: stop))
    waypoint.tripID = plan.otherTripID(ofStop: stop) ?? tripID
    waypoint.waypointType =
      switch plan.kind(ofStop: stop) {
      case .pickup: .pickupWaypointType
      case .dropoff: .dropOffWaypointType
      case .intermediateDestination, .vehicleStart: .intermediateDestinationWaypointType
      }
    return waypoint
  }

  private static func terminal(_ point: GeoPoint) -> FleetEngine.TerminalLocation {
    var location = FleetEngine.TerminalLocation()
    location.point = point.latLng
    return location
  }

  /// The Fleet Engine status of `phase`: the vehicle's progress seen from the plan's trip,
  /// which in a shared ride is on its way to its own next stop while the vehicle drives to,
  /// or waits at, the other trip's.
  static func status(of phase: TripPhase, _ plan: TripPlan) -> FleetEngine.TripStatus {
    switch phase {
    case .new: return .new
    case .enroute(let leg): return enrouteStatus(plan.ownStop(from: leg + 1), plan)
    case .arrived(let stop) where plan.isOwn(stop):
      switch plan.kind(ofStop: stop) {
      case .pickup: return .arrivedAtPickup
      case .intermediateDestination: return .arrivedAtIntermediateDestination
      // The vehicle does not wait at a drop-off nor at its start.
      case .dropoff, .vehicleStart: return enrouteStatus(plan.ownStop(from: stop + 1), plan)
      }
    case .arrived(let stop): return enrouteStatus(plan.ownStop(from: stop + 1), plan)
    case .complete: return .complete
    case .canceled: return .canceled
    }
  }

  /// The status of a trip whose vehicle is on its way to the trip's stop `stop`.
  private static func enrouteStatus(_ stop: Int, _ plan: TripPlan) -> FleetEngine.TripStatus {
    switch plan.kind(ofStop: stop) {
    case .pickup: .enrouteToPickup
    case .intermediateDestination: .enrouteToIntermediateDestination
    case .dropoff, .vehicleStart: .enrouteToDropoff
    }
  }

  /// The intermediate destination the vehicle is heading to or waiting at; the last one once
  /// past them all; 0 before them or when there are none. `phase` is never `.canceled`: a
  /// canceled trip keeps the index it had.
  private static func intermediateIndex(of phase: TripPhase, _ plan: TripPlan) -> Int32 {
    let count = plan.intermediateCount
    guard count > 0 else { return 0 }
    switch phase {
    case .new, .canceled: return 0
    case .enroute(let leg): return Int32(min(max(leg - 1, 0), count - 1))
    case .arrived(let stop): return Int32(max(stop - 2, 0))
    case .complete: return Int32(count - 1)
    }
  }
}
