public import FleetConsumer

// Fleet Engine's traffic is a list of speed-reading intervals over the points of a path
// (traffic.proto: an interval covers the points from start_polyline_point_index to
// end_polyline_point_index; intervals come in path order). The SDK draws a path as one
// polyline per run of equal speed; so do we.

extension RouteSegment {
  /// The segments of `points` (one leg's path), one per run of edges of equal speed, in path
  /// order, styled by `style`. Empty when the path has fewer than two points or the style
  /// hides the leg.
  ///
  /// The edge from point i to point i + 1 takes the speed of the interval with
  /// start ≤ i < end; edges no interval covers are ``SpeedType/noData`` (a path without
  /// traffic is one no-data segment). Indices beyond the path are clamped, empty or reversed
  /// intervals ignored; where intervals overlap (which the server does not send) the later
  /// one wins. With traffic off in `style` the segments still carry their speed, all in the
  /// line's colour, as the SDK's `trafficColorForSpeed:` answers.
  public static func segments(
    of points: [GoogleType.LatLng], traffic: [FleetEngine.SpeedReadingInterval],
    leg: RouteLeg, style: PolylineStyleOptions
  ) -> [RouteSegment] {
    guard style.isVisible, points.count >= 2 else { return [] }
    let edges = points.count - 1
    var speeds = [SpeedType](repeating: .noData, count: edges)
    for interval in traffic {
      let start = max(0, Int(interval.startPolylinePointIndex))
      let end = min(edges, Int(interval.endPolylinePointIndex))
      guard start < end else { continue }
      let speed = SpeedType(interval.speed)
      for edge in start..<end { speeds[edge] = speed }
    }

    var segments: [RouteSegment] = []
    func close(_ first: Int, _ last: Int) {
      let speed = speeds[first]
      segments.append(
        RouteSegment(
          leg: leg, speed: speed, points: Array(points[first...last]),
          color: style.trafficColor(for: speed), width: style.strokeWidth, zIndex: style.zIndex))
    }
    var runStart = 0
    for edge in 1..<edges where speeds[edge] != speeds[runStart] {
      close(runStart, edge)
      runStart = edge
    }
    close(runStart, edges)
    return segments
  }
}
