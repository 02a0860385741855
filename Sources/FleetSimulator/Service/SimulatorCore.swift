internal import FleetProtos
internal import GRPCWire

/// The parts of a simulator that serve calls: its trips, planner, renderer, token check and
/// fault injector. Shared by the gRPC handlers and the in-process API.
final class SimulatorCore: Sendable {
  let options: SimulatorOptions
  let clock: SimulationClock
  let store = TripStore()
  let planner: TripPlanner
  let renderer: TripRenderer
  let access: AccessCheck
  let faults: FaultInjector

  /// The farthest apart two consecutive stops may be, in metres; it bounds a route's size.
  static let maximumStopDistance = 50_000.0
  /// The most intermediate destinations a trip may have.
  static let maximumIntermediateDestinations = 25

  init(options: SimulatorOptions) {
    self.options = options
    clock = SimulationClock(
      timeScale: options.timeScale,
      step: options.clockStep.map {
        $0.components.seconds * 1_000_000_000 + $0.components.attoseconds / 1_000_000_000
      },
      frozenAt: options.frozenAt.map {
        Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18
      })
    planner = TripPlanner(options: options)
    renderer = TripRenderer(clock: clock, trafficPeriod: options.trafficPeriod.seconds)
    access = AccessCheck(policy: options.tokenPolicy)
    faults = FaultInjector(options: options.faults, seed: options.seed)
  }

  /// The record of a new trip `name` as `trip` (a CreateTrip request's) describes it, created
  /// at wall time `now`; `generatedIntermediates` adds that many intermediate destinations
  /// when the trip names none. Throws INVALID_ARGUMENT for fields the simulator cannot use.
  func makeRecord(
    _ name: TripName, _ trip: FleetEngine.Trip, now: Int64, generatedIntermediates: Int = 0
  ) throws(RPCError) -> TripRecord {
    let pickup = try Self.point(trip.pickupPoint, field: "trip.pickup_point")
    let dropoff = try Self.point(trip.dropoffPoint, field: "trip.dropoff_point")
    var intermediates: [GeoPoint] = []
    for (index, location) in trip.intermediateDestinations.enumerated() {
      let field = "trip.intermediate_destinations[\(index)]"
      guard let point = try Self.point(location, field: field) else {
        throw FleetEngineError.invalidArgument(field: field, "the destination has no point")
      }
      intermediates.append(point)
    }
    guard intermediates.count <= Self.maximumIntermediateDestinations else {
      throw FleetEngineError.invalidArgument(
        field: "trip.intermediate_destinations",
        "a trip may have at most \(Self.maximumIntermediateDestinations) intermediate "
          + "destinations, not \(intermediates.count)")
    }
    let tripType: FleetEngine.TripType =
      trip.tripType == .unknownTripType ? .exclusive : trip.tripType
    if tripType == .shared && !intermediates.isEmpty {
      throw FleetEngineError.invalidArgument(
        field: "trip.intermediate_destinations",
        "only EXCLUSIVE trips may have intermediate destinations")
    }
    guard trip.numberOfPassengers >= 0 else {
      throw FleetEngineError.invalidArgument(
        field: "trip.number_of_passengers", "the number of passengers must not be negative")
    }
    let stops = planner.stops(
      name: name.description, pickup: pickup, intermediates: intermediates, dropoff: dropoff,
      generatedIntermediates: generatedIntermediates)
    // Checked before the route is laid: its size grows with the distance.
    for leg in 1..<(stops.points.count - 1)
    where stops.points[leg].distance(to: stops.points[leg + 1]) > Self.maximumStopDistance {
      throw FleetEngineError.invalidArgument(
        field: "trip",
        "consecutive stops are more than \(Int(Self.maximumStopDistance / 1000)) km apart; "
          + "the simulator drives city trips")
    }
    let plan = planner.plan(stops)
    return TripRecord(
      name: name.description, vehicleID: trip.vehicleID, tripType: tripType,
      numberOfPassengers: trip.numberOfPassengers, attributes: trip.attributes, plan: plan,
      createdAt: now)
  }

  /// The point of `location`, nil when absent; INVALID_ARGUMENT when it is not a position.
  private static func point(_ location: FleetEngine.TerminalLocation?, field: String)
    throws(RPCError) -> GeoPoint?
  {
    guard let latLng = location?.point else { return nil }
    let point = GeoPoint(latLng)
    guard point.isValid else {
      throw FleetEngineError.invalidArgument(
        field: "\(field).point",
        "(\(latLng.latitude), \(latLng.longitude)) is not a valid latitude and longitude")
    }
    return point
  }

  /// The parsed `name` of a call to `method` on one trip, once the fault injector has had its
  /// turn and the caller's token allows that trip. Throws the injected fault, UNAUTHENTICATED,
  /// INVALID_ARGUMENT for a malformed name or PERMISSION_DENIED, checked in that order.
  func admit(_ method: String, tripName name: String, _ context: ServerContext) throws
    -> TripName
  {
    try faults.beforeCall(method, context)
    let grant = try access.authenticate(context.requestMetadata)
    let tripName = try TripName(requestName: name)
    try access.authorize(grant, tripID: tripName.tripID)
    return tripName
  }

  /// What ``admit(_:tripName:_:)`` checks, in the same order, then the record of trip `name`
  /// (NOT_FOUND when there is none): for a call that reads one trip.
  ///
  /// The name is parsed only when no trip has it, for the error it then deserves: a stored
  /// trip's name is valid (the store is keyed by the names that parsed), and its record knows
  /// its ID. Parsing was about a tenth of fleet-sim's loop at 10,000 GetTrip calls a second.
  func admittedRecord(_ method: String, tripName name: String, _ context: ServerContext) throws
    -> TripRecord
  {
    try faults.beforeCall(method, context)
    let grant = try access.authenticate(context.requestMetadata)
    guard let record = store.record(named: name) else {
      let tripName = try TripName(requestName: name)
      try access.authorize(grant, tripID: tripName.tripID)
      throw FleetEngineError.tripNotFound(name)
    }
    if case .trip = grant { try access.authorize(grant, tripID: String(record.tripID)) }
    return record
  }
}
