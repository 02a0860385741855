/// What a marker stands for: the Consumer SDK's customizable marker types.
///
/// The raw value is the name the SVG writes in `data-role`.
public enum MarkerKind: String, Sendable, Hashable, CaseIterable {
  /// The vehicle serving the trip, at its last reported location.
  case vehicle
  /// The trip's pickup point.
  case pickup
  /// The trip's drop-off point.
  case dropoff
  /// One of the trip's intermediate destinations.
  case intermediateDestination = "intermediate"
}
