internal import FleetProtos

/// What the simulator stores of one trip: its identity, the fields a provider set, and its
/// plan. Everything else a response shows is computed from these (``TripRenderer``).
struct TripRecord: Sendable {
  /// `providers/{provider_id}/trips/{trip_id}`.
  let name: String
  /// The simulated vehicle serving the trip.
  var vehicleID: String
  var tripType: FleetEngine.TripType
  var numberOfPassengers: Int32
  var attributes: [FleetEngine.TripAttribute]
  /// The route and timings.
  let plan: TripPlan
  /// When the trip was created (wall time, nanoseconds since 1970).
  let createdAt: Int64
  /// When an UpdateTrip canceled the trip (simulated seconds from creation).
  var canceledAt: Double?
  /// How often the record was changed since its creation (``TripStore/modify(named:_:)``):
  /// a stream that saw one revision knows it has to look again when it sees another.
  var revision: UInt64 = 0

  /// The trip ID (the last component of ``name``).
  var tripID: Substring {
    name[name.index(after: name.lastIndex(of: "/")!)...]
  }

  /// The trip's state at wall time `wall` (before creation: its state at creation).
  func state(at wall: Int64, clock: SimulationClock) -> TripState {
    state(atSimulatedTime: clock.simulatedTime(at: wall, createdAt: createdAt))
  }

  /// The trip's state at simulated time `time`.
  func state(atSimulatedTime time: Double) -> TripState {
    TripState(plan: plan, at: max(time, 0), canceledAt: canceledAt)
  }

  /// Heap bytes held by the record's arrays (not counting strings or allocator overhead).
  var storageBytes: Int { plan.storageBytes }
}
