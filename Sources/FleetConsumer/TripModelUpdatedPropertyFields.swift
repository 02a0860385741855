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
  /// `eta_to_first_waypoint`: the ETA at the next stop (this trip's own next stop when
  /// ``TripService/Options/hidesOtherTrips`` is on, as it is by default).
  public static let etaToNextWaypoint = Self(rawValue: 1 << 11)
  /// `name`: the trip's name (reported with the first response).
  public static let tripName = Self(rawValue: 1 << 12)
  /// `vehicle_id`: the vehicle serving the trip; a change means the trip was reassigned.
  public static let vehicleID = Self(rawValue: 1 << 13)
  /// `trip_type`: EXCLUSIVE or SHARED.
  public static let tripType = Self(rawValue: 1 << 14)
  /// `number_of_passengers`.
  public static let numberOfPassengers = Self(rawValue: 1 << 15)
  /// `intermediate_destination_index`: which intermediate destination the vehicle drives to
  /// or waits at; reported only for a trip that has intermediate destinations.
  public static let intermediateDestinationIndex = Self(rawValue: 1 << 16)
  /// The remaining route: the route beyond the active one, i.e. the `path_to_waypoint`
  /// points of `remaining_waypoints[1...]`, in order.
  public static let remainingRoute = Self(rawValue: 1 << 17)
  /// The driving distance of the remaining route: the sum of the `distance_meters` of
  /// `remaining_waypoints[1...]`.
  public static let remainingRouteDistance = Self(rawValue: 1 << 18)
  /// The traffic along the remaining route: the speed-reading intervals of the
  /// `traffic_to_waypoint` of `remaining_waypoints[1...]`, in order, their point indices
  /// counted in the remaining route.
  public static let remainingRouteTraffic = Self(rawValue: 1 << 19)

  /// Every field, in the order their callbacks are made.
  ///
  /// The twelve fields of the first releases keep their relative order; the later ones sit
  /// beside their kin (identity first, the remaining route after the active route's traffic).
  public static let allFields: [(field: Self, name: String)] = [
    (.tripName, "tripName"),
    (.vehicleID, "vehicleID"),
    (.tripType, "tripType"),
    (.tripStatus, "tripStatus"),
    (.numberOfPassengers, "numberOfPassengers"),
    (.activeRouteRemainingDistance, "activeRouteRemainingDistance"),
    (.activeRoute, "activeRoute"),
    (.vehicleLocation, "vehicleLocation"),
    (.pickupLocation, "pickupLocation"),
    (.dropoffLocation, "dropoffLocation"),
    (.pickupETA, "pickupETA"),
    (.dropoffETA, "dropoffETA"),
    (.remainingWaypoints, "remainingWaypoints"),
    (.intermediateDestinations, "intermediateDestinations"),
    (.intermediateDestinationIndex, "intermediateDestinationIndex"),
    (.activeRouteTraffic, "activeRouteTraffic"),
    (.remainingRoute, "remainingRoute"),
    (.remainingRouteDistance, "remainingRouteDistance"),
    (.remainingRouteTraffic, "remainingRouteTraffic"),
    (.etaToNextWaypoint, "etaToNextWaypoint"),
  ]

  /// The names of the members, in callback order, e.g. `[tripStatus, vehicleLocation]`.
  public var description: String {
    "[" + Self.allFields.filter { contains($0.field) }.map(\.name).joined(separator: ", ") + "]"
  }
}
