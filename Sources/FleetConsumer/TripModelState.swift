/// Whether a ``TripModel`` is following its trip.
public enum TripModelState: Sendable, Hashable, CustomStringConvertible {
  /// Not following: no subscriber yet, the last one left, or the trip reached a terminal
  /// status (COMPLETE or CANCELED) and that was delivered.
  case inactive
  /// Following: polling `GetTrip` (or backing off after an error) for its subscribers.
  case active

  /// `inactive` or `active`.
  public var description: String {
    switch self {
    case .inactive: "inactive"
    case .active: "active"
    }
  }
}
