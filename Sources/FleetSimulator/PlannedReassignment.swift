/// A change of vehicle planned for a trip the simulator makes up (a demo trip,
/// ``SimulatedTripKind/reassigned``): at a set moment the trip's `vehicle_id` changes, as
/// when a provider's UpdateTrip reassigns it.
///
/// Before the vehicle reached the pickup, the new vehicle starts afresh some blocks from the
/// pickup (a place that depends only on the trip's name, the vehicle and the seed) and
/// drives there, so the ETA and route change with the ID; from the pickup on, the new
/// vehicle takes over where the old one is and the trip goes on as planned. A moment after
/// the trip's end plans nothing.
public struct PlannedReassignment: Sendable, Hashable {
  /// When, in simulated time after the trip's creation; nil: halfway through the drive to the
  /// pickup.
  public var after: Duration?
  /// The new vehicle; nil: a new simulated one (`sim-vehicle-<n>`).
  public var vehicleID: String?

  /// Halfway to the pickup (or `after`), to a new simulated vehicle (or `vehicleID`).
  public init(after: Duration? = nil, vehicleID: String? = nil) {
    self.after = after
    self.vehicleID = vehicleID
  }
}
