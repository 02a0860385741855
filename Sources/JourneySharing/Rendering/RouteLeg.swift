/// Which of the two route polylines of the Consumer SDK a segment belongs to.
///
/// The raw value is the name the SVG writes in `data-leg`.
public enum RouteLeg: String, Sendable, Hashable, CaseIterable {
  /// From the vehicle to its next stop (`Trip.route`, the SDK's ACTIVE_ROUTE).
  case active
  /// Beyond the next stop, through this trip's later stops
  /// (``FleetConsumer/FleetEngine/Trip/remainingRoute``, the SDK's REMAINING_ROUTE).
  case remaining
}
