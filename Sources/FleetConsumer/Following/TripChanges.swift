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
    var changed: TripModelUpdatedPropertyFields = []
    func check<Value: Equatable>(
      _ field: TripModelUpdatedPropertyFields, _ before: Value, _ after: Value
    ) {
      if before != after { changed.insert(field) }
    }
    check(.tripName, old.name, new.name)
    check(.vehicleID, old.vehicleID, new.vehicleID)
    check(.tripType, old.tripType, new.tripType)
    check(.tripStatus, old.tripStatus, new.tripStatus)
    check(.numberOfPassengers, old.numberOfPassengers, new.numberOfPassengers)
    check(.activeRouteRemainingDistance, old.remainingDistanceMeters, new.remainingDistanceMeters)
    check(.activeRoute, old.route, new.route)
    check(.vehicleLocation, old.vehiclePosition, new.lastLocation?.location)
    check(.pickupLocation, old.pickupPoint, new.pickupPoint?.point)
    check(.dropoffLocation, old.dropoffPoint, new.dropoffPoint?.point)
    check(.pickupETA, old.pickupTime, new.pickupTime)
    check(.dropoffETA, old.dropoffTime, new.dropoffTime)
    check(.remainingWaypoints, old.remainingWaypoints, new.remainingWaypoints)
    check(.intermediateDestinations, old.intermediateDestinations, new.intermediateDestinations)
    check(
      .intermediateDestinationIndex, old.intermediateDestinationIndex,
      new.knownIntermediateDestinationIndex)
    check(.activeRouteTraffic, old.currentRouteSegmentTraffic, new.currentRouteSegmentTraffic)
    // The remaining route is made of the remaining waypoints: unchanged with them (the usual
    // poll), so it is only looked at when they changed.
    if changed.contains(.remainingWaypoints) {
      changed.formUnion(
        RemainingRoute.changedFields(from: old.remainingWaypoints, to: new.remainingWaypoints))
    }
    check(.etaToNextWaypoint, old.etaToFirstWaypoint, new.etaToFirstWaypoint)
    self.init(changed: changed, in: new)
  }

  /// The callbacks for `changed`, the properties that changed on the way to `new` (as
  /// ``Trip/merge(_:sent:)`` tells them).
  init(changed: TripModelUpdatedPropertyFields, in new: FleetEngine.Trip) {
    guard !changed.isEmpty else { return }
    fields = changed
    var properties: [TripModelEvent] = []
    // Room for the update and every property: one allocation, never a regrowth.
    properties.reserveCapacity(TripModelUpdatedPropertyFields.allFields.count + 1)
    properties.append(.tripUpdated(new, changed))
    func add(_ field: TripModelUpdatedPropertyFields, _ event: @autoclosure () -> TripModelEvent) {
      if changed.contains(field) { properties.append(event()) }
    }
    add(.tripName, .tripName(new.name))
    add(.vehicleID, .vehicleID(new.vehicleID))
    add(.tripType, .tripType(new.tripType))
    add(.tripStatus, .tripStatus(new.tripStatus))
    add(.numberOfPassengers, .numberOfPassengers(new.numberOfPassengers))
    add(.activeRouteRemainingDistance, .activeRouteRemainingDistance(new.remainingDistanceMeters))
    add(.activeRoute, .activeRoute(new.route))
    add(.vehicleLocation, .vehicleLocation(new.lastLocation))
    add(.pickupLocation, .pickupLocation(new.pickupPoint))
    add(.dropoffLocation, .dropoffLocation(new.dropoffPoint))
    add(.pickupETA, .pickupETA(new.pickupTime?.date))
    add(.dropoffETA, .dropoffETA(new.dropoffTime?.date))
    add(.remainingWaypoints, .remainingWaypoints(new.remainingWaypoints))
    add(.intermediateDestinations, .intermediateDestinations(new.intermediateDestinations))
    add(
      .intermediateDestinationIndex,
      .intermediateDestinationIndex(new.knownIntermediateDestinationIndex))
    add(.activeRouteTraffic, .activeRouteTraffic(new.currentRouteSegmentTraffic))
    add(.remainingRoute, .remainingRoute(RemainingRoute.points(new.remainingWaypoints)))
    add(
      .remainingRouteDistance,
      .remainingRouteDistance(RemainingRoute.distance(new.remainingWaypoints)))
    add(
      .remainingRouteTraffic, .remainingRouteTraffic(RemainingRoute.traffic(new.remainingWaypoints))
    )
    add(.etaToNextWaypoint, .etaToNextWaypoint(new.etaToFirstWaypoint?.date))
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
