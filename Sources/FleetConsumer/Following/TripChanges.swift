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
    self.init(from: Reported(old), to: new)
  }

  /// The changes from the properties `old` reported to `new`.
  init(from old: Reported, to new: FleetEngine.Trip) {
    var properties: [TripModelEvent] = []
    // Room for the update and every property: one allocation, never a regrowth.
    properties.reserveCapacity(TripModelUpdatedPropertyFields.allFields.count + 1)
    func check<Value: Equatable>(
      _ field: TripModelUpdatedPropertyFields, _ before: Value, _ after: Value,
      _ event: @autoclosure () -> TripModelEvent
    ) {
      guard before != after else { return }
      fields.insert(field)
      properties.append(event())
    }
    check(.tripName, old.name, new.name, .tripName(new.name))
    check(.vehicleID, old.vehicleID, new.vehicleID, .vehicleID(new.vehicleID))
    check(.tripType, old.tripType, new.tripType, .tripType(new.tripType))
    check(.tripStatus, old.tripStatus, new.tripStatus, .tripStatus(new.tripStatus))
    check(
      .numberOfPassengers, old.numberOfPassengers, new.numberOfPassengers,
      .numberOfPassengers(new.numberOfPassengers))
    check(
      .activeRouteRemainingDistance, old.remainingDistanceMeters, new.remainingDistanceMeters,
      .activeRouteRemainingDistance(new.remainingDistanceMeters))
    check(.activeRoute, old.route, new.route, .activeRoute(new.route))
    check(
      .vehicleLocation, old.vehiclePosition, new.lastLocation?.location,
      .vehicleLocation(new.lastLocation))
    check(
      .pickupLocation, old.pickupPoint, new.pickupPoint?.point, .pickupLocation(new.pickupPoint))
    check(
      .dropoffLocation, old.dropoffPoint, new.dropoffPoint?.point,
      .dropoffLocation(new.dropoffPoint))
    check(.pickupETA, old.pickupTime, new.pickupTime, .pickupETA(new.pickupTime?.date))
    check(.dropoffETA, old.dropoffTime, new.dropoffTime, .dropoffETA(new.dropoffTime?.date))
    let waypointsChanged = old.remainingWaypoints != new.remainingWaypoints
    if waypointsChanged {
      fields.insert(.remainingWaypoints)
      properties.append(.remainingWaypoints(new.remainingWaypoints))
    }
    check(
      .intermediateDestinations, old.intermediateDestinations, new.intermediateDestinations,
      .intermediateDestinations(new.intermediateDestinations))
    check(
      .intermediateDestinationIndex, old.intermediateDestinationIndex,
      new.knownIntermediateDestinationIndex,
      .intermediateDestinationIndex(new.knownIntermediateDestinationIndex))
    check(
      .activeRouteTraffic, old.currentRouteSegmentTraffic, new.currentRouteSegmentTraffic,
      .activeRouteTraffic(new.currentRouteSegmentTraffic))
    // The remaining route is made of the remaining waypoints: unchanged with them (the usual
    // poll), so it is only looked at when they changed.
    if waypointsChanged {
      let after = new.remainingWaypoints
      let differ = RemainingRoute.changes(from: old.remainingWaypoints, to: after)
      if differ.points {
        fields.insert(.remainingRoute)
        properties.append(.remainingRoute(RemainingRoute.points(after)))
      }
      if differ.distance {
        fields.insert(.remainingRouteDistance)
        properties.append(.remainingRouteDistance(RemainingRoute.distance(after)))
      }
      if differ.traffic {
        fields.insert(.remainingRouteTraffic)
        properties.append(.remainingRouteTraffic(RemainingRoute.traffic(after)))
      }
    }
    check(
      .etaToNextWaypoint, old.etaToFirstWaypoint, new.etaToFirstWaypoint,
      .etaToNextWaypoint(new.etaToFirstWaypoint?.date))
    guard !properties.isEmpty else { return }
    // In place rather than `[update] + properties`, which builds a second array.
    properties.insert(.tripUpdated(new, fields), at: 0)
    events = properties
  }

  /// The values of a trip that the callbacks report, each compared as its callback sees it.
  /// Taken before a response is merged into the held trip in place: a score of values rather
  /// than a copy of the whole trip, which would also make the merge copy its storage.
  struct Reported {
    var name: String
    var vehicleID: String
    var tripType: FleetEngine.TripType
    var numberOfPassengers: Int32
    var intermediateDestinationIndex: Int32?
    var tripStatus: FleetEngine.TripStatus
    var remainingDistanceMeters: Int32?
    var route: [GoogleType.LatLng]
    var vehiclePosition: GoogleType.LatLng?
    var pickupPoint: GoogleType.LatLng?
    var dropoffPoint: GoogleType.LatLng?
    var pickupTime: GoogleProtobuf.Timestamp?
    var dropoffTime: GoogleProtobuf.Timestamp?
    var remainingWaypoints: [FleetEngine.TripWaypoint]
    var intermediateDestinations: [FleetEngine.TerminalLocation]
    var currentRouteSegmentTraffic: FleetEngine.ConsumableTrafficPolyline?
    var etaToFirstWaypoint: GoogleProtobuf.Timestamp?

    init(_ trip: FleetEngine.Trip) {
      name = trip.name
      vehicleID = trip.vehicleID
      tripType = trip.tripType
      numberOfPassengers = trip.numberOfPassengers
      intermediateDestinationIndex = trip.knownIntermediateDestinationIndex
      tripStatus = trip.tripStatus
      remainingDistanceMeters = trip.remainingDistanceMeters
      route = trip.route
      vehiclePosition = trip.lastLocation?.location
      pickupPoint = trip.pickupPoint?.point
      dropoffPoint = trip.dropoffPoint?.point
      pickupTime = trip.pickupTime
      dropoffTime = trip.dropoffTime
      remainingWaypoints = trip.remainingWaypoints
      intermediateDestinations = trip.intermediateDestinations
      currentRouteSegmentTraffic = trip.currentRouteSegmentTraffic
      etaToFirstWaypoint = trip.etaToFirstWaypoint
    }
  }

  var isEmpty: Bool { events.isEmpty }
}
