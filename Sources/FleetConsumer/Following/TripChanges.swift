internal import FleetProtos
internal import FoundationEssentials

/// What one update changed, as the callbacks to make: `tripUpdated` with the changed fields,
/// then one event per changed property, in the order of
/// ``TripModelUpdatedPropertyFields/allFields``. Empty when nothing changed.
///
/// Each property is compared on the value its callback reports, so a vehicle location counts
/// as changed when its position moved, not when only its timestamp did; list properties are
/// compared element by element, so a list whose content changes counts even when its length
/// stays the same.
struct TripChanges {
  private(set) var fields: TripModelUpdatedPropertyFields = []
  private(set) var events: [TripModelEvent] = []

  /// The changes from `old` (an empty trip before the first response) to `new`.
  init(from old: FleetEngine.Trip, to new: FleetEngine.Trip) {
    var properties: [TripModelEvent] = []
    func check<Value: Equatable>(
      _ field: TripModelUpdatedPropertyFields, _ value: (FleetEngine.Trip) -> Value,
      _ event: @autoclosure () -> TripModelEvent
    ) {
      guard value(old) != value(new) else { return }
      fields.insert(field)
      properties.append(event())
    }
    check(.tripStatus, \.tripStatus, .tripStatus(new.tripStatus))
    check(
      .activeRouteRemainingDistance, \.remainingDistanceMeters,
      .activeRouteRemainingDistance(new.remainingDistanceMeters))
    check(.activeRoute, \.route, .activeRoute(new.route))
    check(.vehicleLocation, \.lastLocation?.location, .vehicleLocation(new.lastLocation))
    check(.pickupLocation, \.pickupPoint?.point, .pickupLocation(new.pickupPoint))
    check(.dropoffLocation, \.dropoffPoint?.point, .dropoffLocation(new.dropoffPoint))
    check(.pickupETA, \.pickupTime, .pickupETA(new.pickupTime?.date))
    check(.dropoffETA, \.dropoffTime, .dropoffETA(new.dropoffTime?.date))
    check(.remainingWaypoints, \.remainingWaypoints, .remainingWaypoints(new.remainingWaypoints))
    check(
      .intermediateDestinations, \.intermediateDestinations,
      .intermediateDestinations(new.intermediateDestinations))
    check(
      .activeRouteTraffic, \.currentRouteSegmentTraffic,
      .activeRouteTraffic(new.currentRouteSegmentTraffic))
    check(
      .etaToNextWaypoint, \.etaToFirstWaypoint, .etaToNextWaypoint(new.etaToFirstWaypoint?.date))
    guard !properties.isEmpty else { return }
    events = [.tripUpdated(new, fields)] + properties
  }

  var isEmpty: Bool { events.isEmpty }
}
