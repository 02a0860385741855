public import FleetProtos

// The remaining route as the Consumer SDKs report it (iOS `remainingRoute`,
// `distanceOfRemainingRouteInMeters`, `remainingRouteTraffic`): the route beyond the active
// one. Computed from the remaining waypoints a subscriber sees, so with
// ``TripService/Options/hidesOtherTrips`` on (the default) it is this trip's own way on.

extension FleetEngine.Trip {
  /// The route beyond the active route: the `path_to_waypoint` points of
  /// `remaining_waypoints[1...]`, in order, joined as they are (each path starts where the
  /// one before it ends). Empty on the last leg.
  public var remainingRoute: [GoogleType.LatLng] {
    RemainingRoute.points(remainingWaypoints)
  }

  /// The driving distance of ``remainingRoute`` in meters: the sum of the `distance_meters`
  /// of `remaining_waypoints[1...]`; 0 on the last leg (one waypoint left), nil when any of
  /// them has no distance or no waypoint is left.
  public var remainingRouteDistanceMeters: Int32? {
    RemainingRoute.distance(remainingWaypoints)
  }

  /// The traffic along ``remainingRoute``: the speed-reading intervals of the
  /// `traffic_to_waypoint` of `remaining_waypoints[1...]`, in order, with their point indices
  /// moved from each waypoint's path into ``remainingRoute`` (a waypoint's interval over
  /// points 0…5 of its path covers points k…k+5 of the remaining route, k being the points of
  /// the paths before it). Empty when none of them carries traffic.
  public var remainingRouteTraffic: [FleetEngine.SpeedReadingInterval] {
    RemainingRoute.traffic(remainingWaypoints)
  }

  /// The index of the intermediate destination the vehicle drives to or waits at; nil for a
  /// trip without intermediate destinations (Fleet Engine ignores the field then).
  var knownIntermediateDestinationIndex: Int32? {
    intermediateDestinations.isEmpty ? nil : intermediateDestinationIndex
  }
}

/// The remaining route's parts, from a list of remaining waypoints.
enum RemainingRoute {
  static func points(_ waypoints: [FleetEngine.TripWaypoint]) -> [GoogleType.LatLng] {
    let paths = waypoints.dropFirst()
    guard let first = paths.first else { return [] }
    // One path (the usual case on a two-stop trip): its array as it is, not a copy.
    if paths.count == 1 { return first.pathToWaypoint }
    var points: [GoogleType.LatLng] = []
    points.reserveCapacity(paths.reduce(0) { $0 + $1.pathToWaypoint.count })
    for waypoint in paths { points.append(contentsOf: waypoint.pathToWaypoint) }
    return points
  }

  static func distance(_ waypoints: [FleetEngine.TripWaypoint]) -> Int32? {
    // No waypoint at all: nothing known (before the first response, after the end).
    guard !waypoints.isEmpty else { return nil }
    var total: Int64 = 0
    for waypoint in waypoints.dropFirst() {
      guard let meters = waypoint.distanceMeters else { return nil }
      total += Int64(meters)
    }
    return Int32(clamping: total)
  }

  static func traffic(_ waypoints: [FleetEngine.TripWaypoint]) -> [FleetEngine.SpeedReadingInterval]
  {
    var intervals: [FleetEngine.SpeedReadingInterval] = []
    var offset: Int32 = 0
    for waypoint in waypoints.dropFirst() {
      if let traffic = waypoint.trafficToWaypoint {
        for var interval in traffic.speedReadingInterval {
          interval.startPolylinePointIndex = interval.startPolylinePointIndex &+ offset
          interval.endPolylinePointIndex = interval.endPolylinePointIndex &+ offset
          intervals.append(interval)
        }
      }
      offset = offset &+ Int32(clamping: waypoint.pathToWaypoint.count)
    }
    return intervals
  }

  /// The remaining route's properties (points, distance, traffic) that differ between two
  /// lists of remaining waypoints. Cheap when they are the same, as on most polls: with as many waypoints in both, the
  /// paths and traffic are compared waypoint by waypoint, and those the merge carried over
  /// are the same arrays, which compare at once. Only what may differ is joined and compared
  /// whole.
  static func changedFields(
    from old: [FleetEngine.TripWaypoint], to new: [FleetEngine.TripWaypoint]
  ) -> TripModelUpdatedPropertyFields {
    let distance = Self.distance(old) != Self.distance(new)
    var mayDifferInPoints = true
    var mayDifferInTraffic = true
    if old.count == new.count {
      mayDifferInPoints = false
      mayDifferInTraffic = false
      for index in old.indices.dropFirst() {
        let before = old[index].pathToWaypoint
        let after = new[index].pathToWaypoint
        if before != after {
          mayDifferInPoints = true
          // Paths of other lengths move the later intervals' indices.
          if before.count != after.count { mayDifferInTraffic = true }
        }
        if old[index].trafficToWaypoint?.speedReadingInterval
          != new[index].trafficToWaypoint?.speedReadingInterval
        {
          mayDifferInTraffic = true
        }
      }
    }
    let points =
      mayDifferInPoints
      && !old.dropFirst().lazy.flatMap(\.pathToWaypoint)
        .elementsEqual(new.dropFirst().lazy.flatMap(\.pathToWaypoint))
    let traffic = mayDifferInTraffic && Self.traffic(old) != Self.traffic(new)
    var fields: TripModelUpdatedPropertyFields = []
    if points { fields.insert(.remainingRoute) }
    if distance { fields.insert(.remainingRouteDistance) }
    if traffic { fields.insert(.remainingRouteTraffic) }
    return fields
  }
}
