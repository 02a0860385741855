/// What the trips a simulator makes up do (`createTrips(count:providerID:kind:)`,
/// `fleet-sim --trips N --trip-kind KIND`), each showing a part of Fleet Engine's trip model
/// that a follower has to handle.
public enum SimulatedTripKind: String, CaseIterable, Sendable {
  /// One rider, pickup and drop-off: the default, and the load benchmark's trip.
  case exclusive
  /// Three intermediate destinations between pickup and drop-off:
  /// `intermediate_destination_index` goes 0, 1, 2 and the remaining waypoints shrink
  /// stop by stop.
  case multiStop = "multi-stop"
  /// A new vehicle halfway to the pickup (``PlannedReassignment`` with its defaults):
  /// `vehicle_id` changes, and the new vehicle drives to the pickup from elsewhere.
  case reassigned
  /// Two SHARED trips on one vehicle (trips 1 and 2, 3 and 4, …; an odd last trip rides
  /// alone): first rider's pickup, second rider's pickup, first rider's drop-off, second
  /// rider's drop-off. Each trip's remaining waypoints carry the other's stops, named by
  /// their `trip_id`; one and two passengers.
  case shared
  /// The kinds above in turn, five trips a round: exclusive, multi-stop, reassigned, and a
  /// shared pair.
  case mixed

  /// The number of intermediate destinations of a ``multiStop`` trip.
  public static let multiStopIntermediateDestinations = 3
}
