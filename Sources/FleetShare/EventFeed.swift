internal import FleetConsumer
internal import FoundationEssentials
internal import JourneySharing

/// A trip as the share server shows it: the trip, and when its vehicle location arrived
/// (what a location without `update_time` is aged from).
struct Shown: Sendable {
  let trip: FleetEngine.Trip
  let locationReceivedAt: Date?

  /// Its rendering in `style`, now.
  func rendering(_ style: JourneySharingStyle, now: Date = Date()) -> TripRendering {
    TripRendering(trip: trip, style: style, now: now, locationReceivedAt: locationReceivedAt)
  }
}

/// One viewer's event stream, as text: a `data: <JSON>` event for each trip update and
/// failure, and for each tick at which the vehicle turned stale or fresh, or its "last seen"
/// text changed. The JSON only grows: `status`, `statusText`, `eta`, `distance`, `vehicle`,
/// `svg` (or `error` and `category` for a failure) as before; `stale` (with a vehicle) and
/// `lastSeen` (when stale); with a street map, `map`: the rendering for Leaflet.
struct EventFeed {
  enum Input: Sendable {
    case event(TripFanOut.Event)
    /// Time passed (a second).
    case tick
  }

  let renderer: SVGRenderer
  let style: JourneySharingStyle
  let withMap: Bool
  private var latest: FleetEngine.Trip?
  /// What the last event said of the vehicle's staleness.
  private var shown: (stale: Bool, lastSeen: String?) = (false, nil)

  init(renderer: SVGRenderer, style: JourneySharingStyle, withMap: Bool) {
    self.renderer = renderer
    self.style = style
    self.withMap = withMap
  }

  /// The SSE text for `input`, or nil when it changes nothing a viewer sees.
  mutating func next(_ input: Input, locationReceivedAt: Date?, now: Date = Date()) -> String? {
    var body = EventBody()
    switch input {
    case .event(.failed(let error)):
      // The code and category only: an error's message may name the trip.
      body.error = "\(error.code)"
      body.category = "\(error.category)"
    case .event(.trip(let trip)):
      latest = trip
      describe(
        Shown(trip: trip, locationReceivedAt: locationReceivedAt).rendering(style, now: now),
        in: &body)
    case .tick:
      // Rendered only when the vehicle is, or just turned, stale: a tick of a fresh vehicle
      // (each viewer's every second) costs a comparison. An ended trip's is never stale.
      guard let latest, !latest.tripStatus.isTerminal, let threshold = style.staleLocationThreshold,
        latest.lastLocation?.location != nil,
        let located = latest.lastLocation?.updateTime?.date ?? locationReceivedAt,
        shown.stale || now.timeIntervalSince(located) > threshold / .seconds(1)
      else { return nil }
      let rendering = Shown(trip: latest, locationReceivedAt: locationReceivedAt)
        .rendering(style, now: now)
      guard rendering.isVehicleStale != shown.stale || rendering.lastSeenText != shown.lastSeen
      else { return nil }
      describe(rendering, in: &body)
    }
    let data = (try? JSONEncoder().encode(body)) ?? Data("{}".utf8)
    return "data: \(String(decoding: data, as: UTF8.self))\n\n"
  }

  private mutating func describe(_ rendering: TripRendering, in body: inout EventBody) {
    body.status = rendering.statusName
    body.statusText = rendering.statusName.replacingOccurrences(of: "_", with: " ").capitalized
    body.eta = rendering.etaText
    body.distance = rendering.distanceText
    let vehicle = rendering.markers.first { $0.kind == .vehicle }
    body.vehicle = vehicle.map { Position(lat: $0.position.latitude, lng: $0.position.longitude) }
    body.stale = vehicle.map { _ in rendering.isVehicleStale }
    body.lastSeen = rendering.lastSeenText
    body.svg = renderer.render(rendering)
    if withMap { body.map = MapData(rendering, renderer) }
    shown = (rendering.isVehicleStale, rendering.lastSeenText)
  }
}

private struct EventBody: Encodable {
  var status: String?
  var statusText: String?
  var eta: String?
  var distance: String?
  var vehicle: Position?
  var stale: Bool?
  var lastSeen: String?
  var svg: String?
  var map: MapData?
  var error: String?
  var category: String?
}

private struct Position: Encodable {
  let lat: Double
  let lng: Double
}

/// A rendering for the street-map page's script: the camera's bounds and padding, route
/// segments in drawing order with their style, and each marker as the SVG renderer draws it.
private struct MapData: Encodable {
  struct Route: Encodable {
    let leg: String
    let speed: String
    let color: String
    let opacity: Double
    let width: Double
    /// `[latitude, longitude]` pairs.
    let points: [[Double]]
  }

  struct Marker: Encodable {
    let role: String
    let lat: Double
    let lng: Double
    /// The icon's width and height in pixels.
    let size: Double
    let z: Int32
    let svg: String
  }

  /// `[[south, west], [north, east]]`.
  let bounds: [[Double]]
  let padding: Double
  let routes: [Route]
  let markers: [Marker]

  init(_ rendering: TripRendering, _ renderer: SVGRenderer) {
    let camera = rendering.camera.bounds
    bounds = [[camera.south, camera.west], [camera.north, camera.east]]
    padding = rendering.camera.padding
    // By z-index, ties in the rendering's order, as the SVG draws them.
    routes = rendering.routeSegments.enumerated()
      .sorted { ($0.element.zIndex, $0.offset) < ($1.element.zIndex, $1.offset) }
      .map { _, segment in
        Route(
          leg: segment.leg.rawValue, speed: segment.speed.rawValue,
          color: segment.color.hexString, opacity: segment.color.opacity, width: segment.width,
          points: segment.points.map { [$0.latitude, $0.longitude] })
      }
    markers = rendering.markers.map { marker in
      Marker(
        role: marker.kind.rawValue, lat: marker.position.latitude, lng: marker.position.longitude,
        size: SVGRenderer.extent(of: marker), z: marker.style.zIndex,
        svg: renderer.render(marker: marker))
    }
  }
}
