internal import FleetProtos

/// The simulated traffic along a trip's route: every stretch of a few route points is
/// normal, slow or jammed, drawn afresh for each traffic period.
///
/// Like the rest of a trip it is a pure function — of the trip's traffic seed, the stretch and
/// the period's number — so nothing is stored and every caller sees the same traffic. The
/// vehicle's speed does not depend on it: traffic is information for the follower, and ETAs
/// stay exactly predictable.
enum TrafficModel {
  /// Route points per stretch of uniform speed.
  static let pointsPerStretch = 4

  /// The speed on the route segment from point `index` to the next, in traffic period
  /// `period`.
  static func speed(seed: UInt64, segment index: Int, period: Int)
    -> FleetEngine.SpeedReadingInterval.Speed
  {
    let stretch = UInt64(index / pointsPerStretch)
    let draw = SplitMix64.mix(seed ^ SplitMix64.mix(stretch &* 0x1000_0000_01B3 ^ UInt64(period)))
    switch draw % 100 {
    case 0..<10: return .trafficJam
    case 10..<30: return .slow
    default: return .normal
    }
  }

  /// The speed reading intervals of the route from point `start` to point `end`, with indices
  /// counted from `start` (the first point of the route the follower receives). Adjacent
  /// segments of equal speed share one interval; intervals meet at their end points.
  static func intervals(seed: UInt64, from start: Int, to end: Int, period: Int)
    -> [FleetEngine.SpeedReadingInterval]
  {
    var intervals: [FleetEngine.SpeedReadingInterval] = []
    guard end > start else { return intervals }
    var runStart = start
    var runSpeed = speed(seed: seed, segment: start, period: period)
    for segment in (start + 1)...end {
      let speed =
        segment < end ? self.speed(seed: seed, segment: segment, period: period) : nil
      if speed != runSpeed {
        var interval = FleetEngine.SpeedReadingInterval()
        interval.startPolylinePointIndex = Int32(runStart - start)
        interval.endPolylinePointIndex = Int32(segment - start)
        interval.speed = runSpeed
        intervals.append(interval)
        runStart = segment
        if let speed { runSpeed = speed }
      }
    }
    return intervals
  }
}
