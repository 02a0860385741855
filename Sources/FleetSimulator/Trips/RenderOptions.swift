internal import FleetProtos

/// What a caller asked for when a trip is rendered: the view, the route format, and the
/// versions of the versioned parts it already holds (so unchanged parts are left out).
struct RenderOptions: Sendable, Equatable {
  var view: FleetEngine.TripView = .sdk
  var routeFormat: FleetEngine.PolylineFormatType = .latLngListType
  /// The caller's `current_route_segment_version` (wall nanoseconds).
  var heldRouteVersion: Int64?
  /// The caller's `current_route_segment_traffic_version`.
  var heldTrafficVersion: Int64?
  /// The caller's `remaining_waypoints_route_version`.
  var heldWaypointsRouteVersion: Int64?
  /// Whether to fill `vehicle_waypoints` (CreateTrip and UpdateTrip responses only).
  var includeVehicleWaypoints = false

  /// Everything, as a provider's CreateTrip or UpdateTrip response shows it.
  static let provider = RenderOptions(includeVehicleWaypoints: true)

  /// Everything, without `vehicle_waypoints` (SearchTrips, in-process look-ups).
  static let full = RenderOptions()

  init(
    view: FleetEngine.TripView = .sdk,
    routeFormat: FleetEngine.PolylineFormatType = .latLngListType,
    includeVehicleWaypoints: Bool = false
  ) {
    self.view = view
    self.routeFormat = routeFormat
    self.includeVehicleWaypoints = includeVehicleWaypoints
  }

  init(_ request: FleetEngine.GetTripRequest) {
    self.init(view: request.view, routeFormat: request.routeFormatType)
    heldRouteVersion = request.currentRouteSegmentVersion?.nanosecondsSince1970
    heldTrafficVersion = request.currentRouteSegmentTrafficVersion?.nanosecondsSince1970
    heldWaypointsRouteVersion = request.remainingWaypointsRouteVersion?.nanosecondsSince1970
  }

  init(_ request: FleetFeed.WatchTripRequest) {
    self.init(view: request.view, routeFormat: request.routeFormatType)
    heldRouteVersion = request.currentRouteSegmentVersion?.nanosecondsSince1970
    heldTrafficVersion = request.currentRouteSegmentTrafficVersion?.nanosecondsSince1970
    heldWaypointsRouteVersion = request.remainingWaypointsRouteVersion?.nanosecondsSince1970
  }

  /// Records the versions `trip` carries as held (a stream does this after each update).
  mutating func hold(versionsOf trip: FleetEngine.Trip) {
    heldRouteVersion = trip.currentRouteSegmentVersion?.nanosecondsSince1970 ?? heldRouteVersion
    heldTrafficVersion =
      trip.currentRouteSegmentTrafficVersion?.nanosecondsSince1970 ?? heldTrafficVersion
    heldWaypointsRouteVersion =
      trip.remainingWaypointsRouteVersion?.nanosecondsSince1970 ?? heldWaypointsRouteVersion
  }
}

extension GoogleProtobuf.Timestamp {
  /// The timestamp of wall time `nanoseconds` (since 1970).
  init(nanosecondsSince1970 nanoseconds: Int64) {
    self.init()
    let (seconds, remainder) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
    // Protobuf keeps nanos non-negative, also before 1970.
    self.seconds = remainder < 0 ? seconds - 1 : seconds
    self.nanos = Int32(remainder < 0 ? remainder + 1_000_000_000 : remainder)
  }

  /// Nanoseconds since 1970, saturated at the ends of `Int64`.
  var nanosecondsSince1970: Int64 {
    let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return seconds < 0 ? .min : .max }
    let (sum, overflowSum) = product.addingReportingOverflow(Int64(nanos))
    return overflowSum ? (nanos < 0 ? .min : .max) : sum
  }
}
