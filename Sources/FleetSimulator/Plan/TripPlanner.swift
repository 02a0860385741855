internal import Foundation  // cos, sin, atan2

/// Makes trip plans: road-like routes through a trip's stops, with plausible stops where the
/// request gave none.
///
/// Routes follow a Manhattan grid: between two stops the vehicle drives two to four straight
/// runs, alternately east–west and north–south, with points every 55–95 m. Everything random
/// is drawn from a generator seeded by the options' seed and the trip's name, so a trip is
/// planned the same way every time.
struct TripPlanner: Sendable {
  let options: SimulatorOptions

  /// A trip's stops, chosen before its route is laid; ``plan(_:)`` continues from here.
  struct Stops {
    /// The vehicle's start, the pickup, the intermediate destinations and the drop-off.
    var points: [GeoPoint]
    /// The generator, where choosing the stops left it.
    var random: SplitMix64
  }

  /// The stops of trip `name`: those given, and generated ones where the request had none —
  /// a pickup near the city centre, a drop-off some kilometres away, `generatedIntermediates`
  /// intermediate destinations to the side of the line between them — after a vehicle start
  /// some blocks from the pickup.
  func stops(
    name: String, pickup: GeoPoint?, intermediates: [GeoPoint], dropoff: GeoPoint?,
    generatedIntermediates: Int = 0
  ) -> Stops {
    var random = SplitMix64(seed: options.seed ^ SplitMix64.hash(name))
    let pickup =
      pickup
      ?? randomPoint(near: GeoPoint(options.cityCenter), within: options.cityRadius, &random)
    let dropoff =
      dropoff ?? randomPoint(around: pickup, at: options.dropoffDistance, &random)
    let start = randomPoint(around: pickup, at: options.vehicleStartDistance, &random)
    var middle = intermediates
    if middle.isEmpty && generatedIntermediates > 0 {
      let (north, east) = pickup.displacement(to: dropoff)
      for index in 1...generatedIntermediates {
        let fraction = Double(index) / Double(generatedIntermediates + 1)
        let side = random.uniform(300...600) * (index.isMultiple(of: 2) ? 1 : -1)
        let length = max((north * north + east * east).squareRoot(), 1)
        middle.append(
          pickup.offset(
            north: north * fraction + side * east / length,
            east: east * fraction - side * north / length))
      }
    }
    return Stops(points: [start, pickup] + middle + [dropoff], random: random)
  }

  /// The plan through `stops`.
  func plan(_ stops: Stops) -> TripPlan {
    var random = stops.random
    var route = RoutePolyline()
    route.append(stops.points[0])
    var stopIndices: ContiguousArray<Int32> = [0]
    stopIndices.reserveCapacity(stops.points.count)
    var previous = route.point(0)
    for stop in stops.points.dropFirst() {
      appendStreets(from: previous, to: stop, &random, into: &route)
      stopIndices.append(Int32(route.count - 1))
      previous = route.point(route.count - 1)
    }
    route.shrinkToFit()
    return TripPlan(
      route: route, stopIndices: stopIndices,
      speed: Float(options.speedKilometersPerHour / 3.6),
      newDuration: Float(options.newDuration.seconds),
      pickupWait: Float(options.pickupWait.seconds),
      intermediateWait: Float(options.intermediateWait.seconds),
      trafficSeed: random.next())
  }

  /// Appends the route from `from` (already in `route`) to `to`, without `from` itself.
  func appendStreets(
    from origin: GeoPoint, to destination: GeoPoint, _ random: inout SplitMix64,
    into route: inout RoutePolyline
  ) {
    let (north, east) = origin.displacement(to: destination)
    let runs = 2 + Int(random.next() % 3)
    let startsEast = random.next() % 2 == 0
    let eastRuns = startsEast ? (runs + 1) / 2 : runs / 2
    let eastParts = split(east, into: eastRuns, &random)
    let northParts = split(north, into: runs - eastRuns, &random)
    var corner = origin
    var (northSoFar, eastSoFar) = (0.0, 0.0)
    var (eastIndex, northIndex) = (0, 0)
    for run in 0..<runs {
      if (run % 2 == 0) == startsEast {
        eastSoFar += eastParts[eastIndex]
        eastIndex += 1
      } else {
        northSoFar += northParts[northIndex]
        northIndex += 1
      }
      // The last corner is the destination itself, not an approximation of it.
      let next =
        run == runs - 1 ? destination : origin.offset(north: northSoFar, east: eastSoFar)
      let length = corner.distance(to: next)
      let steps = max(1, Int((length / random.uniform(55...95)).rounded(.up)))
      for step in 1...steps {
        route.append(corner.interpolated(to: next, fraction: Double(step) / Double(steps)))
      }
      corner = next
    }
  }

  /// `total` cut into `count` random parts of roughly equal size.
  private func split(_ total: Double, into count: Int, _ random: inout SplitMix64) -> [Double] {
    let weights = (0..<count).map { _ in random.uniform(0.5...1.5) }
    let sum = weights.reduce(0, +)
    return weights.map { total * $0 / sum }
  }

  /// A random point at most `radius` metres from `center`, uniform over the disc.
  private func randomPoint(near center: GeoPoint, within radius: Double, _ random: inout SplitMix64)
    -> GeoPoint
  {
    let distance = radius * random.unit().squareRoot()
    let angle = random.uniform(0...(2 * .pi))
    return center.offset(north: distance * cos(angle), east: distance * sin(angle))
  }

  /// A random point at a distance within `distances` of `center`.
  func randomPoint(
    around center: GeoPoint, at distances: ClosedRange<Double>, _ random: inout SplitMix64
  ) -> GeoPoint {
    let distance = random.uniform(distances)
    let angle = random.uniform(0...(2 * .pi))
    return center.offset(north: distance * cos(angle), east: distance * sin(angle))
  }
}
