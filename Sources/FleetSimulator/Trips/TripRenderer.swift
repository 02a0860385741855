internal import FleetProtos

/// Turns a stored trip and a moment into the `maps.fleetengine.v1.Trip` a caller sees, as
/// Fleet Engine answers a consumer.
///
/// Versions are wall-clock timestamps of when each part last changed: the route
/// (`current_route_segment_version`) when the vehicle passed a route point or a leg began;
/// the traffic when the route or the traffic period changed; the remaining waypoints at each
/// stop; their paths and traffic with the traffic. A part is left out when the caller
/// already holds its current version; the versions themselves are always sent.
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
    let plan = record.plan
    let timestamp = { (time: Double) in
      GoogleProtobuf.Timestamp(
        nanosecondsSince1970: clock.wallTime(at: time, createdAt: record.createdAt))
    }
    let versions = self.versions(of: state, record)
    var trip = FleetEngine.Trip()
    trip.name = record.name
    trip.vehicleID = record.vehicleID
    trip.tripStatus = Self.status(of: state.phase, plan)
    trip.tripType = record.tripType
    trip.numberOfPassengers = record.numberOfPassengers
    trip.attributes = record.attributes
    trip.view = options.view == .unspecified ? .sdk : options.view
    trip.pickupPoint = Self.terminal(plan.location(ofStop: 1))
    trip.dropoffPoint = Self.terminal(plan.location(ofStop: plan.stopCount - 1))
    trip.intermediateDestinations = (2..<(plan.stopCount - 1)).map {
      Self.terminal(plan.location(ofStop: $0))
    }
    trip.intermediateDestinationsVersion = GoogleProtobuf.Timestamp(
      nanosecondsSince1970: record.createdAt)
    trip.intermediateDestinationIndex = Self.intermediateIndex(of: state.phase, plan)
    // Planned until reached, actual afterwards; absent when the trip was canceled first.
    let pickupArrival = plan.arrival(atStop: 1)
    let dropoffArrival = plan.completion
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
      trip.currentRouteSegmentEndPoint = waypoint(stop: leg + 1, String(record.tripID), plan)
      trip.remainingDistanceMeters = Int32(state.remainingMeters.rounded())
      let arrival = plan.arrival(atStop: nextStop)
      trip.etaToFirstWaypoint = timestamp(arrival)
      trip.remainingTimeToFirstWaypoint = GoogleProtobuf.Duration(
        .nanoseconds(max(0, clock.wallTime(at: arrival, createdAt: record.createdAt) - renderWall)))
      trip.lastLocationSnappable = true
      trip.remainingWaypoints = remainingWaypoints(
        record, state, from: nextStop, currentPath: sendWaypointPaths ? currentPath : nil)
      if options.includeVehicleWaypoints {
        trip.vehicleWaypoints = trip.remainingWaypoints.map {
          var waypoint = $0
          waypoint.pathToWaypoint = []
          waypoint.encodedPathToWaypoint = ""
          waypoint.trafficToWaypoint = nil
          return waypoint
        }
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

  /// The stops from `first` to the drop-off with their distances, ETAs and travel times, and,
  /// when given `currentPath` (the first one's path), their paths and traffic.
  private func remainingWaypoints(
    _ record: TripRecord, _ state: TripState, from first: Int, currentPath: Path?
  ) -> [FleetEngine.TripWaypoint] {
    let plan = record.plan
    let tripID = String(record.tripID)
    return (first..<plan.stopCount).map { stop in
      var waypoint = waypoint(stop: stop, tripID, plan)
      let isFirst = stop == first
      waypoint.distanceMeters = Int32(
        (isFirst ? state.remainingMeters : plan.length(ofLeg: stop - 1)).rounded())
      waypoint.eta = GoogleProtobuf.Timestamp(
        nanosecondsSince1970: clock.wallTime(
          at: plan.arrival(atStop: stop), createdAt: record.createdAt))
      // Travel from the previous stop (from here, for the first), in real time like the ETAs.
      let travel =
        isFirst ? plan.arrival(atStop: stop) - state.time : plan.duration(ofLeg: stop - 1)
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
    return Versions(
      route: route, traffic: traffic, waypoints: wall(state.waypointsVersion),
      waypointsRoute: traffic)
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

  private func waypoint(stop: Int, _ tripID: String, _ plan: TripPlan) -> FleetEngine.TripWaypoint {
    var waypoint = FleetEngine.TripWaypoint()
    waypoint.location = Self.terminal(plan.location(ofStop: stop))
    waypoint.tripID = tripID
    waypoint.waypointType =
      switch stop {
      case 1: .pickupWaypointType
      case plan.stopCount - 1: .dropOffWaypointType
      default: .intermediateDestinationWaypointType
      }
    return waypoint
  }

  private static func terminal(_ point: GeoPoint) -> FleetEngine.TerminalLocation {
    var location = FleetEngine.TerminalLocation()
    location.point = point.latLng
    return location
  }

  /// The Fleet Engine status of `phase`.
  static func status(of phase: TripPhase, _ plan: TripPlan) -> FleetEngine.TripStatus {
    switch phase {
    case .new: .new
    case .enroute(let leg) where leg == 0: .enrouteToPickup
    case .enroute(let leg) where leg == plan.legCount - 1: .enrouteToDropoff
    case .enroute: .enrouteToIntermediateDestination
    case .arrived(let stop) where stop == 1: .arrivedAtPickup
    case .arrived: .arrivedAtIntermediateDestination
    case .complete: .complete
    case .canceled: .canceled
    }
  }

  /// The intermediate destination the vehicle is heading to or waiting at; the last one once
  /// past them all; 0 before them or when there are none.
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
