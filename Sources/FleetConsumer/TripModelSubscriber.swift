public import FoundationEssentials

/// Something told about a trip's changes, property by property, in the vocabulary of Fleet
/// Engine's Consumer SDK. Register it with ``TripModel/register(_:)``.
///
/// Every method has a default implementation that does nothing: implement the ones you need.
/// For one model, callbacks arrive in order and never concurrently, on the executor chosen
/// in ``TripService/Options/callbackExecutor``; an update that changed anything calls
/// `tripModel(_:didUpdate:updatedPropertyFields:)` first, then one method per changed
/// property in the order of ``TripModelUpdatedPropertyFields/allFields``. A property the
/// server left out of a response keeps its value and is not reported; a poll that changed
/// nothing calls nothing, unless the subscriber asked to hear of every successful poll
/// (``receivesRefreshes``).
///
/// Subscribers are held weakly, as on iOS: one that is deallocated is dropped, and when no
/// subscriber is left the model stops following.
public protocol TripModelSubscriber: AnyObject, Sendable {
  /// The trip changed; `trip` is the merged trip, `updatedPropertyFields` what changed.
  func tripModel(
    _ model: TripModel, didUpdate trip: FleetEngine.Trip,
    updatedPropertyFields: TripModelUpdatedPropertyFields)
  /// The trip status changed. After COMPLETE or CANCELED the model stops following.
  func tripModel(_ model: TripModel, didUpdateTripStatus status: FleetEngine.TripStatus)
  /// The driving distance left on the active route changed (meters; nil when unknown).
  func tripModel(_ model: TripModel, didUpdateActiveRouteRemainingDistance meters: Int32?)
  /// The active route changed: the points from the vehicle to its next stop.
  func tripModel(_ model: TripModel, didUpdateActiveRoute points: [GoogleType.LatLng])
  /// The vehicle's position changed.
  func tripModel(
    _ model: TripModel, didUpdateVehicleLocation location: FleetEngine.VehicleLocation?)
  /// The pickup point changed.
  func tripModel(
    _ model: TripModel, didUpdatePickupLocation location: FleetEngine.TerminalLocation?)
  /// The drop-off point changed.
  func tripModel(
    _ model: TripModel, didUpdateDropoffLocation location: FleetEngine.TerminalLocation?)
  /// The pickup ETA changed (the actual pickup time once the rider is on board).
  func tripModel(_ model: TripModel, didUpdatePickupETA eta: Date?)
  /// The drop-off ETA changed (the actual drop-off time once the trip is complete).
  func tripModel(_ model: TripModel, didUpdateDropoffETA eta: Date?)
  /// The remaining waypoints changed.
  func tripModel(
    _ model: TripModel, didUpdateRemainingWaypoints waypoints: [FleetEngine.TripWaypoint])
  /// The intermediate destinations changed.
  func tripModel(
    _ model: TripModel,
    didUpdateIntermediateDestinations destinations: [FleetEngine.TerminalLocation])
  /// The traffic along the active route changed.
  func tripModel(
    _ model: TripModel,
    didUpdateActiveRouteTraffic traffic: FleetEngine.ConsumableTrafficPolyline?)
  /// The ETA at the next waypoint changed (on a shared vehicle it may be another trip's).
  func tripModel(_ model: TripModel, didUpdateETAToNextWaypoint eta: Date?)
  /// The trip's name became known (with the first response).
  func tripModel(_ model: TripModel, didUpdateTripName name: String)
  /// The vehicle serving the trip changed: the trip was assigned, or reassigned to another
  /// vehicle.
  func tripModel(_ model: TripModel, didUpdateVehicleID vehicleID: String)
  /// The trip type (EXCLUSIVE, SHARED) changed.
  func tripModel(_ model: TripModel, didUpdateTripType type: FleetEngine.TripType)
  /// The number of passengers changed.
  func tripModel(_ model: TripModel, didUpdateNumberOfPassengers count: Int32)
  /// The intermediate destination the vehicle drives to or waits at changed (its index in
  /// the intermediate destinations; nil when the trip has none).
  func tripModel(_ model: TripModel, didUpdateIntermediateDestinationIndex index: Int32?)
  /// The remaining route changed: the points beyond the active route
  /// (``FleetEngine/Trip/remainingRoute``).
  func tripModel(_ model: TripModel, didUpdateRemainingRoute points: [GoogleType.LatLng])
  /// The driving distance of the remaining route changed (meters; nil when unknown).
  func tripModel(_ model: TripModel, didUpdateRemainingRouteDistance meters: Int32?)
  /// The traffic along the remaining route changed (``FleetEngine/Trip/remainingRouteTraffic``).
  func tripModel(
    _ model: TripModel,
    didUpdateRemainingRouteTraffic intervals: [FleetEngine.SpeedReadingInterval])
  /// A poll (or a feed update) succeeded at `date`, whether or not anything changed: called
  /// after that update's other callbacks, and only when ``receivesRefreshes`` is true.
  func tripModel(_ model: TripModel, didRefreshAt date: Date)
  /// Whether to call ``tripModel(_:didRefreshAt:)`` after every successful poll; read once,
  /// when the subscriber registers. False by default: a subscriber hears only of changes.
  var receivesRefreshes: Bool { get }
  /// The model started or stopped following.
  func tripModel(_ model: TripModel, didChangeState state: TripModelState)
  /// An update failed; `error` is in the domain `io.grpc`. The model keeps following: it
  /// recovers from `.serverOrNetwork` errors by itself and keeps retrying the others, more
  /// slowly, until you fix the cause or stop following (see ``RetryPolicy``).
  func tripModel(_ model: TripModel, didFailUpdateTripWithError error: RPCError)
}

// Every callback is optional: these defaults do nothing.
extension TripModelSubscriber {
  /// Does nothing.
  public func tripModel(
    _ model: TripModel, didUpdate trip: FleetEngine.Trip,
    updatedPropertyFields: TripModelUpdatedPropertyFields
  ) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateTripStatus status: FleetEngine.TripStatus) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateActiveRouteRemainingDistance meters: Int32?) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateActiveRoute points: [GoogleType.LatLng]) {}
  /// Does nothing.
  public func tripModel(
    _ model: TripModel, didUpdateVehicleLocation location: FleetEngine.VehicleLocation?
  ) {}
  /// Does nothing.
  public func tripModel(
    _ model: TripModel, didUpdatePickupLocation location: FleetEngine.TerminalLocation?
  ) {}
  /// Does nothing.
  public func tripModel(
    _ model: TripModel, didUpdateDropoffLocation location: FleetEngine.TerminalLocation?
  ) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdatePickupETA eta: Date?) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateDropoffETA eta: Date?) {}
  /// Does nothing.
  public func tripModel(
    _ model: TripModel, didUpdateRemainingWaypoints waypoints: [FleetEngine.TripWaypoint]
  ) {}
  /// Does nothing.
  public func tripModel(
    _ model: TripModel,
    didUpdateIntermediateDestinations destinations: [FleetEngine.TerminalLocation]
  ) {}
  /// Does nothing.
  public func tripModel(
    _ model: TripModel,
    didUpdateActiveRouteTraffic traffic: FleetEngine.ConsumableTrafficPolyline?
  ) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateETAToNextWaypoint eta: Date?) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateTripName name: String) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateVehicleID vehicleID: String) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateTripType type: FleetEngine.TripType) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateNumberOfPassengers count: Int32) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateIntermediateDestinationIndex index: Int32?) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateRemainingRoute points: [GoogleType.LatLng]) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didUpdateRemainingRouteDistance meters: Int32?) {}
  /// Does nothing.
  public func tripModel(
    _ model: TripModel,
    didUpdateRemainingRouteTraffic intervals: [FleetEngine.SpeedReadingInterval]
  ) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didRefreshAt date: Date) {}
  /// False: only changes are reported.
  public var receivesRefreshes: Bool { false }
  /// Does nothing.
  public func tripModel(_ model: TripModel, didChangeState state: TripModelState) {}
  /// Does nothing.
  public func tripModel(_ model: TripModel, didFailUpdateTripWithError error: RPCError) {}
}

extension TripModelSubscriber {
  /// Calls the method that corresponds to `event`.
  func receive(_ event: TripModelEvent, from model: TripModel) {
    switch event {
    case .tripUpdated(let trip, let fields):
      tripModel(model, didUpdate: trip, updatedPropertyFields: fields)
    case .tripStatus(let status): tripModel(model, didUpdateTripStatus: status)
    case .activeRouteRemainingDistance(let meters):
      tripModel(model, didUpdateActiveRouteRemainingDistance: meters)
    case .activeRoute(let points): tripModel(model, didUpdateActiveRoute: points)
    case .vehicleLocation(let location): tripModel(model, didUpdateVehicleLocation: location)
    case .pickupLocation(let location): tripModel(model, didUpdatePickupLocation: location)
    case .dropoffLocation(let location): tripModel(model, didUpdateDropoffLocation: location)
    case .pickupETA(let eta): tripModel(model, didUpdatePickupETA: eta)
    case .dropoffETA(let eta): tripModel(model, didUpdateDropoffETA: eta)
    case .remainingWaypoints(let waypoints):
      tripModel(model, didUpdateRemainingWaypoints: waypoints)
    case .intermediateDestinations(let destinations):
      tripModel(model, didUpdateIntermediateDestinations: destinations)
    case .activeRouteTraffic(let traffic): tripModel(model, didUpdateActiveRouteTraffic: traffic)
    case .etaToNextWaypoint(let eta): tripModel(model, didUpdateETAToNextWaypoint: eta)
    case .tripName(let name): tripModel(model, didUpdateTripName: name)
    case .vehicleID(let id): tripModel(model, didUpdateVehicleID: id)
    case .tripType(let type): tripModel(model, didUpdateTripType: type)
    case .numberOfPassengers(let count): tripModel(model, didUpdateNumberOfPassengers: count)
    case .intermediateDestinationIndex(let index):
      tripModel(model, didUpdateIntermediateDestinationIndex: index)
    case .remainingRoute(let points): tripModel(model, didUpdateRemainingRoute: points)
    case .remainingRouteDistance(let meters):
      tripModel(model, didUpdateRemainingRouteDistance: meters)
    case .remainingRouteTraffic(let intervals):
      tripModel(model, didUpdateRemainingRouteTraffic: intervals)
    case .refreshed(let date): tripModel(model, didRefreshAt: date)
    case .stateChanged(let state): tripModel(model, didChangeState: state)
    case .updateFailed(let error): tripModel(model, didFailUpdateTripWithError: error)
    }
  }
}
