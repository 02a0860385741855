internal import FleetProtos

/// What the simulator stores of one trip: its identity, the fields a provider set, and the
/// vehicles and plans serving it. Everything else a response shows is computed from these
/// (``TripRenderer``).
///
/// Times are simulated seconds on the trip's timeline, whose 0 is ``createdAt``. A trip that
/// joined the vehicle of another (a shared ride made by CreateTrip) takes that trip's
/// timeline, so both compute the same vehicle at the same moment to the nanosecond; it was
/// created at ``first``'s start.
struct TripRecord: Sendable {
  /// `providers/{provider_id}/trips/{trip_id}`.
  let name: String
  var tripType: FleetEngine.TripType
  var numberOfPassengers: Int32
  var attributes: [FleetEngine.TripAttribute]
  /// The vehicle and plan the trip starts with.
  var first: Assignment
  /// The ones that took over later, in order of their start; empty unless the trip was
  /// reassigned or its vehicle's plan changed for a shared ride.
  var later: [Assignment] = []
  /// The wall time (nanoseconds since 1970) of simulated time 0.
  let createdAt: Int64
  /// When an UpdateTrip canceled the trip (simulated seconds).
  var canceledAt: Double?
  /// How often the record was changed since its creation (``TripStore/commit(_:inserting:)``):
  /// a stream that saw one revision knows it has to look again when it sees another.
  var revision: UInt64 = 0

  init(
    name: String, vehicleID: String, tripType: FleetEngine.TripType, numberOfPassengers: Int32,
    attributes: [FleetEngine.TripAttribute], plan: TripPlan, createdAt: Int64
  ) {
    self.name = name
    self.tripType = tripType
    self.numberOfPassengers = numberOfPassengers
    self.attributes = attributes
    self.first = Assignment(vehicleID: vehicleID, plan: plan)
    self.createdAt = createdAt
  }

  /// The trip ID (the last component of ``name``).
  var tripID: Substring {
    // Found in the UTF-8 view: a search by Character pays for grapheme breaking on every render.
    let slash = name.utf8.lastIndex(of: UInt8(ascii: "/"))!
    return name[name.utf8.index(after: slash)...]
  }

  /// The vehicle serving the trip from its creation.
  var vehicleID: String {
    get { first.vehicleID }
    set { first.vehicleID = newValue }
  }

  /// The plan the trip starts with.
  var plan: TripPlan { first.plan }

  /// When the trip was created: 0, or the moment it joined another trip's vehicle.
  var creationTime: Double { first.start }

  /// Assignment `index`: 0 the first, then the later ones in order.
  func assignment(_ index: Int) -> Assignment {
    index == 0 ? first : later[index - 1]
  }

  /// The vehicle serving the trip in `state`.
  func vehicleID(in state: TripState) -> String {
    assignment(state.assignment).vehicleID
  }

  /// Every vehicle the trip has or will have, each once.
  var vehicleIDs: [String] {
    var ids = [first.vehicleID]
    for assignment in later where !ids.contains(assignment.vehicleID) {
      ids.append(assignment.vehicleID)
    }
    return ids
  }

  /// The trip's state at wall time `wall` (before creation: its state at creation).
  func state(at wall: Int64, clock: SimulationClock) -> TripState {
    state(atSimulatedTime: clock.simulatedTime(at: wall, createdAt: createdAt))
  }

  /// The trip's state at simulated time `time` (before creation: its state at creation).
  func state(atSimulatedTime time: Double) -> TripState {
    let time = max(time, first.start)
    guard !later.isEmpty else { return first.state(at: time, canceledAt: canceledAt) }
    // A canceled trip stays as its vehicle left it, whatever was planned after.
    let moment = min(time, canceledAt ?? time)
    let index = later.lastIndex { $0.start <= moment }.map { $0 + 1 } ?? 0
    var state = assignment(index).state(at: time, canceledAt: canceledAt)
    state.assignment = index
    // The next assignment is a change of its own, as a phase's end is.
    if index < later.count && !state.phase.isTerminal {
      state.phaseEnd = min(state.phaseEnd, later[index].start)
    }
    return state
  }

  /// The Fleet Engine status of the trip in `state`.
  func status(in state: TripState) -> FleetEngine.TripStatus {
    TripRenderer.status(of: state.phase, assignment(state.assignment).plan)
  }

  /// Heap bytes held by the record's arrays (not counting strings or allocator overhead).
  var storageBytes: Int {
    later.reduce(first.plan.storageBytes) { $0 + $1.plan.storageBytes }
  }
}
