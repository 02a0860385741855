public import FoundationEssentials

// Only `updateFailed` is boxed (an RPCError is about 120 bytes): the other payloads are a few
// words (a trip and most of its parts are one reference to copy-on-write storage), so an
// update's events are stored inline in one array rather than each in a box of its own.

/// One thing a ``TripModel`` tells its subscribers: each case is one callback of
/// ``TripModelSubscriber``, and ``TripModel/updates`` yields them as values.
///
/// An update that changed anything produces `tripUpdated` first, then one case per changed
/// property in the order of ``TripModelUpdatedPropertyFields/allFields``. A property the
/// server left out of a response keeps its last value and produces nothing.
public enum TripModelEvent: Sendable, Hashable {
  /// The merged trip after an update, with the properties that changed.
  case tripUpdated(FleetEngine.Trip, TripModelUpdatedPropertyFields)
  /// The trip status changed.
  case tripStatus(FleetEngine.TripStatus)
  /// The driving distance left on the active route, in meters, changed.
  case activeRouteRemainingDistance(Int32?)
  /// The active route (the vehicle's path to its next stop) changed; its points.
  case activeRoute([GoogleType.LatLng])
  /// The vehicle's position changed; the whole last reported location.
  case vehicleLocation(FleetEngine.VehicleLocation?)
  /// The pickup point changed.
  case pickupLocation(FleetEngine.TerminalLocation?)
  /// The drop-off point changed.
  case dropoffLocation(FleetEngine.TerminalLocation?)
  /// The pickup ETA (or the actual pickup time) changed.
  case pickupETA(Date?)
  /// The drop-off ETA (or the actual drop-off time) changed.
  case dropoffETA(Date?)
  /// The remaining waypoints changed (any part of any of them).
  case remainingWaypoints([FleetEngine.TripWaypoint])
  /// The intermediate destinations changed.
  case intermediateDestinations([FleetEngine.TerminalLocation])
  /// The traffic along the active route changed.
  case activeRouteTraffic(FleetEngine.ConsumableTrafficPolyline?)
  /// The ETA at the next waypoint (which may belong to another trip on a shared vehicle)
  /// changed.
  case etaToNextWaypoint(Date?)
  /// The trip's name became known (with the first response).
  case tripName(String)
  /// The vehicle serving the trip changed: the trip was assigned, or reassigned to another.
  case vehicleID(String)
  /// The trip type (EXCLUSIVE, SHARED) changed.
  case tripType(FleetEngine.TripType)
  /// The number of passengers changed.
  case numberOfPassengers(Int32)
  /// The intermediate destination the vehicle drives to or waits at changed (nil: the trip
  /// has no intermediate destinations any more).
  case intermediateDestinationIndex(Int32?)
  /// The remaining route (beyond the active route) changed; its points.
  case remainingRoute([GoogleType.LatLng])
  /// The driving distance of the remaining route changed (meters; nil when unknown).
  case remainingRouteDistance(Int32?)
  /// The traffic along the remaining route changed; its speed-reading intervals, with point
  /// indices into the remaining route.
  case remainingRouteTraffic([FleetEngine.SpeedReadingInterval])
  /// A poll (or a feed update) succeeded at this time, whether or not anything changed. Sent
  /// only to subscribers that asked for it (``TripModelSubscriber/receivesRefreshes``,
  /// ``TripModel/updates(includingRefreshes:)``), after the update's other events.
  case refreshed(Date)
  /// The model started or stopped following.
  case stateChanged(TripModelState)
  /// An update failed. One per failed `GetTrip` call (or failed token fetch); the model keeps
  /// following and retries as ``RetryPolicy`` says.
  indirect case updateFailed(RPCError)
}
