/// The trip properties that changed in one update, as passed with
/// ``TripModelSubscriber/tripModel(_:didUpdate:updatedPropertyFields:)``.
///
/// Each member names one per-property callback (and one ``TripModelEvent`` case); an update
/// that changed a property calls exactly the callbacks of the members it contains, in the
/// order of ``allFields``.
public struct TripModelUpdatedPropertyFields: OptionSet, Sendable, Hashable,
  CustomStringConvertible
{
  /// One bit per field.
  public let rawValue: UInt32

  /// The fields whose bits are set in `rawValue`.
  public init(rawValue: UInt32) {
    self.rawValue = rawValue
  }

  /// `trip_status`.
  public static let tripStatus = Self(rawValue: 1 << 0)
  /// `remaining_distance_meters`: the distance left on the active route.
  public static let activeRouteRemainingDistance = Self(rawValue: 1 << 1)
  /// `route`: the points of the active route.
  public static let activeRoute = Self(rawValue: 1 << 2)
  /// `last_location.location`: the vehicle's position.
  public static let vehicleLocation = Self(rawValue: 1 << 3)
  /// `pickup_point.point`.
  public static let pickupLocation = Self(rawValue: 1 << 4)
  /// `dropoff_point.point`.
  public static let dropoffLocation = Self(rawValue: 1 << 5)
  /// `pickup_time`: the pickup ETA (or the actual pickup time once picked up).
  public static let pickupETA = Self(rawValue: 1 << 6)
  /// `dropoff_time`: the drop-off ETA (or the actual drop-off time).
  public static let dropoffETA = Self(rawValue: 1 << 7)
  /// `remaining_waypoints`, any part of any waypoint.
  public static let remainingWaypoints = Self(rawValue: 1 << 8)
  /// `intermediate_destinations`.
  public static let intermediateDestinations = Self(rawValue: 1 << 9)
  /// `current_route_segment_traffic`: traffic along the active route.
  public static let activeRouteTraffic = Self(rawValue: 1 << 10)
  /// `eta_to_first_waypoint`: the ETA at the next stop, whichever trip it belongs to.
  public static let etaToNextWaypoint = Self(rawValue: 1 << 11)

  /// Every field, in the order their callbacks are made.
  public static let allFields: [(field: Self, name: String)] = [
    (.tripStatus, "tripStatus"),
    (.activeRouteRemainingDistance, "activeRouteRemainingDistance"),
    (.activeRoute, "activeRoute"),
    (.vehicleLocation, "vehicleLocation"),
    (.pickupLocation, "pickupLocation"),
    (.dropoffLocation, "dropoffLocation"),
    (.pickupETA, "pickupETA"),
    (.dropoffETA, "dropoffETA"),
    (.remainingWaypoints, "remainingWaypoints"),
    (.intermediateDestinations, "intermediateDestinations"),
    (.activeRouteTraffic, "activeRouteTraffic"),
    (.etaToNextWaypoint, "etaToNextWaypoint"),
  ]

  /// The names of the members, in callback order, e.g. `[tripStatus, vehicleLocation]`.
  public var description: String {
    "[" + Self.allFields.filter { contains($0.field) }.map(\.name).joined(separator: ", ") + "]"
  }
}
