internal import FleetConsumer

// Which routes a rider may see. Fleet Engine's trip of a shared vehicle describes the
// vehicle's whole way: `route` leads to its next stop and `remaining_waypoints` lists every
// stop up to this trip's drop-off, other riders' included, each with the path from the stop
// before it (Google's guide on retrieving trips directly says to filter them before showing
// a trip to its rider). Removing other riders' waypoints is not enough: the path to this
// rider's next stop after theirs starts at their stop, and a route to their stop ends there.
// So a path is drawn only when it continues from a stop of this trip, and the active route
// only when it ends at one.

extension TripRendering {
  /// The active route's segments, or none when the vehicle is on its way to another trip's
  /// stop: `current_route_segment_end_point` names another trip, or, without it, the first
  /// remaining waypoint does (a trip whose other riders' waypoints were not hidden yet).
  static func activeSegments(
    _ trip: FleetEngine.Trip, ownTripID: String, style: PolylineStyleOptions
  ) -> [RouteSegment] {
    let end = trip.currentRouteSegmentEndPoint ?? trip.remainingWaypoints.first
    if let end, isOther(end, ownTripID: ownTripID) { return [] }
    return RouteSegment.segments(
      of: trip.route, traffic: trip.currentRouteSegmentTraffic?.speedReadingInterval ?? [],
      leg: .active, style: style)
  }

  /// The remaining route's segments: the path to each of this trip's waypoints after the
  /// first, with its own traffic, drawn only where it starts at the end of the path before it
  /// (or, that path being empty, at that waypoint's location) — so never from a stop that was
  /// removed. Runs of equal speed that continue across a waypoint are one segment.
  static func remainingSegments(
    _ trip: FleetEngine.Trip, ownTripID: String, style: PolylineStyleOptions
  ) -> [RouteSegment] {
    let own = trip.remainingWaypoints.filter { !isOther($0, ownTripID: ownTripID) }
    var segments: [RouteSegment] = []
    for (previous, waypoint) in zip(own, own.dropFirst()) {
      let path = waypoint.pathToWaypoint
      guard let start = path.first,
        let previousEnd = previous.pathToWaypoint.last ?? previous.location?.point,
        samePlace(start, previousEnd)
      else { continue }
      let traffic = waypoint.trafficToWaypoint?.speedReadingInterval ?? []
      for segment in RouteSegment.segments(
        of: path, traffic: traffic, leg: .remaining, style: style)
      {
        if var last = segments.last, last.speed == segment.speed,
          let end = last.points.last, samePlace(end, start)
        {
          last.points += segment.points.dropFirst()
          segments[segments.count - 1] = last
        } else {
          segments.append(segment)
        }
      }
    }
    return segments
  }

  /// Whether `waypoint` is another trip's. A waypoint naming no trip is this trip's; with
  /// no own trip ID every waypoint naming a trip counts as another's.
  private static func isOther(_ waypoint: FleetEngine.TripWaypoint, ownTripID: String) -> Bool {
    !waypoint.tripID.isEmpty && waypoint.tripID != ownTripID
  }

  private static func samePlace(_ a: GoogleType.LatLng, _ b: GoogleType.LatLng) -> Bool {
    a.latitude == b.latitude && a.longitude == b.longitude
  }
}
