public import FleetConsumer
public import FoundationEssentials

/// A trip as a picture, ready for a renderer: its route split by traffic, its markers, the
/// texts of its status panel and the camera that frames it, all styled by a
/// ``JourneySharingStyle``.
///
/// A value computed from one `FleetEngine.Trip` (what a `TripModel` holds and its
/// `didUpdate trip` callback delivers); compute a new one on each update. A trip with
/// nothing known yet (no vehicle, no route) still renders: the markers it has, framed by
/// the camera, or the whole world when it has none.
///
/// Privacy: nothing drawn, and so nothing the camera fits, reveals another rider's stop on a
/// shared vehicle, whether or not the model already hid their waypoints
/// (`TripService.Options.hidesOtherTrips`): the active route is left out while the vehicle
/// drives to another trip's stop, and a remaining path is drawn only where it continues from
/// one of this trip's stops (`TripRendering+Routes.swift`).
public struct TripRendering: Sendable, Hashable {
  /// The trip's status.
  public var status: FleetEngine.TripStatus
  /// Its Fleet Engine name (`ENROUTE_TO_PICKUP`), as the SVG writes it in `data-trip-status`.
  public var statusName: String { status.description }
  /// The route segments, active route first, each leg in driving order. Renderers draw them
  /// by ``RouteSegment/zIndex``.
  public var routeSegments: [RouteSegment]
  /// The visible markers: vehicle, pickup, intermediate destinations in order, drop-off.
  public var markers: [MapMarker]
  /// When the vehicle is expected at this trip's next stop; nil when unknown or the trip
  /// has ended.
  public var nextStopETA: Date?
  /// The driving distance left to the next stop in meters; nil when unknown or the trip has
  /// ended.
  public var remainingDistanceMeters: Int32?
  /// ``nextStopETA`` as a person reads it, from the time the rendering was made ("4 min").
  public var etaText: String?
  /// ``remainingDistanceMeters`` as a person reads it ("1.2 km").
  public var distanceText: String?
  /// When the vehicle's location was current: its `update_time`, else when it was received
  /// (`locationReceivedAt`); nil when neither is known or there is no vehicle location.
  public var vehicleLocationTime: Date?
  /// Whether the vehicle's location is older than the style's
  /// ``JourneySharingStyle/staleLocationThreshold`` (never once the trip has ended).
  public var isVehicleStale: Bool
  /// For a stale vehicle, how long ago it was seen ("last seen 3 min ago"); else nil.
  public var lastSeenText: String?
  /// What the map shows.
  public var camera: Camera

  /// The rendering of `trip`, whose own trip ID is taken from its `name`. A trip without a
  /// valid name keeps only waypoints that name no trip: whose they are cannot be told.
  /// `now` is the time the ETA text and the location's age count from; `locationReceivedAt`,
  /// when the vehicle's location was received, stands in for a location without
  /// `update_time`.
  public init(
    trip: FleetEngine.Trip, style: JourneySharingStyle = .init(), now: Date = Date(),
    locationReceivedAt: Date? = nil
  ) {
    let ownTripID = (try? TripName(trip.name))?.tripID
    self.init(
      trip: trip, ownTripID: ownTripID ?? "", style: style, now: now,
      locationReceivedAt: locationReceivedAt)
  }

  /// The rendering of what `model` holds now: its current trip, or an empty one of unknown
  /// status before the first response.
  public init(model: TripModel, style: JourneySharingStyle = .init(), now: Date = Date()) {
    self.init(
      trip: model.currentTrip ?? FleetEngine.Trip(), ownTripID: model.tripName.tripID,
      style: style, now: now, locationReceivedAt: nil)
  }

  init(
    trip: FleetEngine.Trip, ownTripID: String, style: JourneySharingStyle, now: Date,
    locationReceivedAt: Date?
  ) {
    status = trip.tripStatus
    let ended = trip.tripStatus.isTerminal

    routeSegments =
      Self.activeSegments(trip, ownTripID: ownTripID, style: style.activeRoute)
      + Self.remainingSegments(trip, ownTripID: ownTripID, style: style.remainingRoute)

    markers = Self.markers(of: trip, style: style)

    nextStopETA = ended ? nil : trip.etaToFirstWaypoint?.date
    remainingDistanceMeters = ended ? nil : trip.remainingDistanceMeters
    etaText = nextStopETA.map { Self.etaText(seconds: $0.timeIntervalSince(now)) }
    distanceText = remainingDistanceMeters.map { Self.distanceText(meters: Double($0)) }

    let location = trip.lastLocation
    vehicleLocationTime =
      location?.location == nil ? nil : location?.updateTime?.date ?? locationReceivedAt
    let age = vehicleLocationTime.map { now.timeIntervalSince($0) }
    if !ended, let age, let threshold = style.staleLocationThreshold,
      age > threshold / .seconds(1)
    {
      isVehicleStale = true
      lastSeenText = Self.lastSeenText(secondsAgo: age)
      if let vehicle = markers.firstIndex(where: { $0.kind == .vehicle }) {
        markers[vehicle].isStale = true
        markers[vehicle].opacity = style.staleVehicleOpacity
        markers[vehicle].label = lastSeenText
      }
    } else {
      isVehicleStale = false
      lastSeenText = nil
    }

    let points = routeSegments.flatMap(\.points) + markers.map(\.position)
    let fitted = CoordinateBounds(fitting: points)?.expanded(
      toMinimumSpan: style.minimumCameraSpan)
    camera = Camera(bounds: fitted ?? .world, padding: style.cameraPadding)
  }

  private static func markers(of trip: FleetEngine.Trip, style: JourneySharingStyle)
    -> [MapMarker]
  {
    var markers: [MapMarker] = []
    func add(
      _ kind: MarkerKind, _ point: GoogleType.LatLng?, heading: Int32? = nil, index: Int? = nil
    ) {
      let markerStyle = style.markerStyle(for: kind)
      guard markerStyle.isVisible, let point, CoordinateBounds.isValid(point) else { return }
      markers.append(
        MapMarker(kind: kind, position: point, heading: heading, index: index, style: markerStyle))
    }
    add(.vehicle, trip.lastLocation?.location, heading: trip.lastLocation?.heading)
    add(.pickup, trip.pickupPoint?.point)
    for (index, destination) in trip.intermediateDestinations.enumerated() {
      add(.intermediateDestination, destination.point, index: index)
    }
    add(.dropoff, trip.dropoffPoint?.point)
    return markers
  }
}
