internal import FleetProtos
internal import ProtoRuntime

/// Phase one of ``FleetEngine/Trip/merge(_:sent:)``: what a `GetTrip` answer (or a feed
/// update), decoded, changes in a held trip, worked out while the held trip stays untouched;
/// nil keeps the held value. A field whose bytes are the held one's is kept as it is held
/// (its storage shared), not replaced by its equal. The scalar fields (status, type, counts,
/// the view) are read in phase two.
struct TripMergePlan {
  var name: String?
  var vehicleID: String?
  var pickupPoint: FleetEngine.TerminalLocation?
  var actualPickupPoint: FleetEngine.StopLocation?
  var actualPickupArrivalPoint: FleetEngine.StopLocation?
  var pickupTime: GoogleProtobuf.Timestamp?
  var intermediateDestinationsVersion: GoogleProtobuf.Timestamp?
  var intermediateDestinations: [FleetEngine.TerminalLocation]?
  var actualIntermediateDestinationArrivalPoints: [FleetEngine.StopLocation]?
  var actualIntermediateDestinations: [FleetEngine.StopLocation]?
  var dropoffPoint: FleetEngine.TerminalLocation?
  var actualDropoffPoint: FleetEngine.StopLocation?
  var dropoffTime: GoogleProtobuf.Timestamp?
  var remainingWaypointsVersion: GoogleProtobuf.Timestamp?
  var remainingWaypointsRouteVersion: GoogleProtobuf.Timestamp?
  var remainingWaypoints: [FleetEngine.TripWaypoint]?
  /// Instead of a new `remainingWaypoints`: the held waypoints whose own numbers alone
  /// changed (the same stops at the same indices, no path sent, as on most polls), to update
  /// in place. Empty when there are none, or when `remainingWaypoints` is set.
  var waypointNumbers: [WaypointNumbers] = []
  var vehicleWaypoints: [FleetEngine.TripWaypoint]?
  var currentRouteSegmentVersion: GoogleProtobuf.Timestamp?
  var route: [GoogleType.LatLng]?
  var currentRouteSegment: String?
  var currentRouteSegmentTrafficVersion: GoogleProtobuf.Timestamp?
  /// `.some(nil)`: the traffic is gone (its version moved and none was sent).
  var currentRouteSegmentTraffic: FleetEngine.ConsumableTrafficPolyline??
  var currentRouteSegmentEndPoint: FleetEngine.TripWaypoint?
  var etaToFirstWaypoint: GoogleProtobuf.Timestamp?
  var remainingTimeToFirstWaypoint: GoogleProtobuf.Duration?
  var lastLocation: FleetEngine.VehicleLocation?
  var attributes: [FleetEngine.TripAttribute]?
  var unknownFields: ProtoUnknownFields?

  /// Whether one of the trip's own stops changes: the waypoints were merged sharing the
  /// stops held before.
  var changesStops: Bool {
    pickupPoint != nil || dropoffPoint != nil || intermediateDestinations != nil
  }

  /// What `r` changes in `held`; `sent` as ``FleetEngine/Trip/merge(_:sent:)`` says.
  init(_ r: FleetEngine.Trip, merging held: FleetEngine.Trip, sent: TripWireDigests.LeftOut) {
    let bytes = SentBytes(sent)
    name = bytes.changed(r.name, held.name, 1)
    vehicleID = bytes.changed(r.vehicleID, held.vehicleID, 2)
    pickupPoint = bytes.changed(r.pickupPoint, held.pickupPoint, 5)
    actualPickupPoint = bytes.changed(r.actualPickupPoint, held.actualPickupPoint, 22)
    actualPickupArrivalPoint = bytes.changed(
      r.actualPickupArrivalPoint, held.actualPickupArrivalPoint, 32)
    pickupTime = bytes.changed(r.pickupTime, held.pickupTime, 6)
    intermediateDestinationsVersion = bytes.version(
      r.intermediateDestinationsVersion, held.intermediateDestinationsVersion)
    intermediateDestinations = bytes.changed(
      r.intermediateDestinations, held.intermediateDestinations, 14,
      orEmptyWhen: intermediateDestinationsVersion != nil)
    actualIntermediateDestinationArrivalPoints = bytes.changed(
      r.actualIntermediateDestinationArrivalPoints,
      held.actualIntermediateDestinationArrivalPoints, 33)
    actualIntermediateDestinations = bytes.changed(
      r.actualIntermediateDestinations, held.actualIntermediateDestinations, 34)
    dropoffPoint = bytes.changed(r.dropoffPoint, held.dropoffPoint, 7)
    actualDropoffPoint = bytes.changed(r.actualDropoffPoint, held.actualDropoffPoint, 23)
    dropoffTime = bytes.changed(r.dropoffTime, held.dropoffTime, 8)
    held.mergeWaypoints(r, bytes, into: &self)
    vehicleWaypoints = bytes.changed(r.vehicleWaypoints, held.vehicleWaypoints, 20)
    mergeRoute(of: r, into: held, bytes)
    currentRouteSegmentEndPoint = bytes.changed(
      r.currentRouteSegmentEndPoint, held.currentRouteSegmentEndPoint, 24)
    etaToFirstWaypoint = bytes.changed(r.etaToFirstWaypoint, held.etaToFirstWaypoint, 13)
    remainingTimeToFirstWaypoint = bytes.changed(
      r.remainingTimeToFirstWaypoint, held.remainingTimeToFirstWaypoint, 27)
    lastLocation = bytes.changed(r.lastLocation, held.lastLocation, 11)
    attributes = bytes.changed(r.attributes, held.attributes, 35)
    if r.unknownFields != held.unknownFields { unknownFields = r.unknownFields }
  }
}
