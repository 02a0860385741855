/// What a simulated trip will do, fixed when it is created: one route through all its stops
/// and the timings along it.
///
/// The plan is all the simulator stores of a trip's movement. Where the vehicle is, the
/// trip's status, its ETAs and the remaining route at any moment are computed from the plan
/// and the simulated time (``TripState``), so thousands of trips cost memory but no timers.
///
/// Stops are, in order: the vehicle's start, the pickup, the intermediate destinations, the
/// drop-off. Leg `k` runs from stop `k` to stop `k + 1`. The timeline, in simulated seconds
/// from creation: NEW for ``newDuration``; then for each leg the drive at ``speed``, and at
/// every stop but the last a wait (``pickupWait`` at the pickup, ``intermediateWait`` at an
/// intermediate destination); COMPLETE on arrival at the drop-off.
///
/// A vehicle that serves two trips at once (a shared ride) has one plan through both trips'
/// stops, which ``sharing`` assigns to their trips; each trip holds it as its own view. The
/// trip's timeline then ends at its own drop-off (``dropoffStop``), wherever the vehicle goes
/// on to, and the vehicle waits at every pickup and at no drop-off.
struct TripPlan: Sendable {
  /// The route through every stop.
  var route: RoutePolyline
  /// The index in ``route`` of each stop.
  var stopIndices: ContiguousArray<Int32>
  /// Driving speed in metres per simulated second.
  var speed: Float
  /// Simulated seconds the trip stays NEW before the vehicle sets off.
  var newDuration: Float
  /// Simulated seconds the vehicle waits at the pickup.
  var pickupWait: Float
  /// Simulated seconds the vehicle waits at each intermediate destination.
  var intermediateWait: Float
  /// Seeds the trip's traffic (``TrafficModel``).
  var trafficSeed: UInt64
  /// Whose each stop is when the vehicle serves more than one trip; nil for a plan of one
  /// trip, whose stops are its own in the order above.
  var sharing: SharedStops? = nil

  /// The number of stops, vehicle start included (at least 3).
  var stopCount: Int { stopIndices.count }

  /// The number of legs (at least 2: to the pickup, to the drop-off).
  var legCount: Int { stopIndices.count - 1 }

  /// The number of the trip's intermediate destinations.
  var intermediateCount: Int { sharing == nil ? stopIndices.count - 3 : 0 }

  /// The trip's pickup.
  var pickupStop: Int { sharing.map { $0.ownStop(.pickup) ?? 1 } ?? 1 }

  /// The trip's drop-off, where its timeline ends.
  var dropoffStop: Int {
    sharing.map { $0.ownStop(.dropoff) ?? stopCount - 1 } ?? stopCount - 1
  }

  /// The trip's intermediate destinations, in order.
  var intermediateStops: Range<Int> { sharing == nil ? 2..<(stopCount - 1) : 0..<0 }

  /// What stop `stop` is for.
  func kind(ofStop stop: Int) -> StopKind {
    if let sharing { return sharing.roles[stop].kind }
    switch stop {
    case 0: return .vehicleStart
    case 1: return .pickup
    case stopCount - 1: return .dropoff
    default: return .intermediateDestination
    }
  }

  /// Whether stop `stop` is one of the trip's own (not another trip's, not the vehicle's
  /// start).
  func isOwn(_ stop: Int) -> Bool {
    sharing?.isOwn(stop) ?? (stop > 0)
  }

  /// The ID of the trip stop `stop` is for, nil when it is the plan's own trip's.
  func otherTripID(ofStop stop: Int) -> String? {
    guard let sharing, !sharing.isOwn(stop) else { return nil }
    return sharing.roles[stop].tripID
  }

  /// The role of stop `stop`, with `tripID` the plan's own trip.
  func role(ofStop stop: Int, tripID: String) -> StopRole {
    sharing?.roles[stop] ?? StopRole(kind: kind(ofStop: stop), tripID: tripID)
  }

  /// The first of the trip's own stops from stop `stop` on (its drop-off at the latest).
  func ownStop(from stop: Int) -> Int {
    guard let sharing else { return stop }
    return (stop..<dropoffStop).first { sharing.isOwn($0) } ?? dropoffStop
  }

  /// The route index of stop `stop`.
  func routeIndex(ofStop stop: Int) -> Int { Int(stopIndices[stop]) }

  /// Where stop `stop` is.
  func location(ofStop stop: Int) -> GeoPoint { route.point(routeIndex(ofStop: stop)) }

  /// Metres along leg `leg`.
  func length(ofLeg leg: Int) -> Double {
    route.distance(at: routeIndex(ofStop: leg + 1)) - route.distance(at: routeIndex(ofStop: leg))
  }

  /// Simulated seconds to drive leg `leg`.
  func duration(ofLeg leg: Int) -> Double { length(ofLeg: leg) / Double(speed) }

  /// Simulated seconds the vehicle waits at `stop` (none at the start or a drop-off).
  func wait(atStop stop: Int) -> Double {
    switch kind(ofStop: stop) {
    case .vehicleStart, .dropoff: 0
    case .pickup: Double(pickupWait)
    case .intermediateDestination: Double(intermediateWait)
    }
  }

  /// When the vehicle arrives at `stop` (≥ 1), in simulated seconds from creation.
  func arrival(atStop stop: Int) -> Double {
    var time = Double(newDuration)
    for leg in 0..<stop {
      if leg > 0 { time += wait(atStop: leg) }
      time += duration(ofLeg: leg)
    }
    return time
  }

  /// When the vehicle sets off on `leg`, in simulated seconds from creation.
  func departure(onLeg leg: Int) -> Double {
    leg == 0 ? Double(newDuration) : arrival(atStop: leg) + wait(atStop: leg)
  }

  /// When the trip completes (arrival at its drop-off).
  var completion: Double { arrival(atStop: dropoffStop) }

  /// The phase at simulated time `time` with when it started and ends (`.infinity` for
  /// COMPLETE); never `.canceled`, which only a ``TripState`` knows about.
  func phase(at time: Double) -> (phase: TripPhase, start: Double, end: Double) {
    var start = 0.0
    var end = Double(newDuration)
    if time < end { return (.new, start, end) }
    let lastStop = dropoffStop
    for leg in 0..<lastStop {
      start = end
      end = start + duration(ofLeg: leg)
      if time < end { return (.enroute(leg: leg), start, end) }
      let stop = leg + 1
      guard stop < lastStop else { break }
      start = end
      end = start + wait(atStop: stop)
      if time < end { return (.arrived(stop: stop), start, end) }
    }
    return (.complete, end, .infinity)
  }

  /// Heap bytes held by the plan (not counting allocator overhead).
  var storageBytes: Int {
    route.storageBytes + stopIndices.capacity * MemoryLayout<Int32>.stride
      + (sharing?.roles.capacity ?? 0) * MemoryLayout<StopRole>.stride
  }
}

/// Where a trip is in its timeline.
enum TripPhase: Hashable, Sendable {
  /// Created; the vehicle has not set off.
  case new
  /// Driving leg `leg` (0: to the pickup; the last: to the drop-off).
  case enroute(leg: Int)
  /// Waiting at stop `stop` (1: the pickup; then the intermediate destinations; in a shared
  /// ride also the other trip's pickup).
  case arrived(stop: Int)
  /// Arrived at the trip's drop-off.
  case complete
  /// Canceled by an UpdateTrip.
  case canceled

  /// Whether the trip has ended.
  var isTerminal: Bool {
    switch self {
    case .complete, .canceled: true
    case .new, .enroute, .arrived: false
    }
  }
}
