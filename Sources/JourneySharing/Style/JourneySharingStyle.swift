/// Everything that decides how a trip looks: the two route polylines, a marker style per
/// ``MarkerKind``, and how the camera frames the trip.
///
/// The defaults look like the phone SDKs' journey sharing: a blue active route coloured by
/// traffic over a grey remaining route, a blue vehicle, pickup and drop-off markers.
public struct JourneySharingStyle: Sendable, Hashable {
  /// The route from the vehicle to its next stop.
  public var activeRoute: PolylineStyleOptions = .activeRoute
  /// The route beyond the next stop.
  public var remainingRoute: PolylineStyleOptions = .remainingRoute
  /// The vehicle's marker.
  public var vehicleMarker: MarkerStyleOptions = .vehicle
  /// The pickup point's marker.
  public var pickupMarker: MarkerStyleOptions = .pickup
  /// The drop-off point's marker.
  public var dropoffMarker: MarkerStyleOptions = .dropoff
  /// The intermediate destinations' markers.
  public var intermediateDestinationMarker: MarkerStyleOptions = .intermediateDestination
  /// The space kept free between what the camera fits and each edge of the viewport, in the
  /// renderer's units (as in the SDK's `fit(bounds, withPadding:)`). At least the largest
  /// marker's half size plus its outline, so markers at the edge stay whole. A renderer
  /// keeps at most a quarter of the viewport's smaller side for it.
  public var cameraPadding: Double = 40
  /// The smallest span, in degrees of latitude and longitude, the camera shows: a trip that is
  /// a single point (only a pickup, a vehicle at its stop) is shown with its streets around
  /// it (0.005° is about 550 m of latitude), not magnified without end.
  public var minimumCameraSpan: Double = 0.005
  /// How old the vehicle's location may get before the vehicle is shown as stale: dimmed to
  /// ``staleVehicleOpacity``, with "last seen N min ago" beside it (the JS SDK's
  /// `staleLocationThresholdMillis`, which hides such a vehicle instead). The age counts from
  /// the location's `update_time`, else from when it was received. nil (the default): never.
  public var staleLocationThreshold: Duration?
  /// The opacity of a stale vehicle's marker, from 0 (invisible) to 1.
  public var staleVehicleOpacity: Double = 0.4

  /// The default style.
  public init() {}

  /// The style of `leg`'s polyline.
  public func polylineStyle(for leg: RouteLeg) -> PolylineStyleOptions {
    switch leg {
    case .active: activeRoute
    case .remaining: remainingRoute
    }
  }

  /// The style of markers of `kind`.
  public func markerStyle(for kind: MarkerKind) -> MarkerStyleOptions {
    switch kind {
    case .vehicle: vehicleMarker
    case .pickup: pickupMarker
    case .dropoff: dropoffMarker
    case .intermediateDestination: intermediateDestinationMarker
    }
  }
}
