/// Draws a ``TripRendering`` as one self-contained SVG document: the routes and markers
/// projected by Web Mercator into a `width` × `height` viewport, on a plain background — no
/// map tiles, fonts, scripts or style sheets, nothing fetched.
///
/// The document is the `<svg>` element alone (no XML declaration), so it can be served as
/// `image/svg+xml` or placed inline in an HTML page. Its test hooks are fixed: the root has
/// `data-trip-status` (the Fleet Engine status name); each route segment is a `<polyline>`
/// with `data-role="route"`, `data-leg="active|remaining"` and
/// `data-speed="NORMAL|SLOW|TRAFFIC_JAM|NO_DATA"`; each marker has `data-role` `vehicle`,
/// `pickup`, `dropoff` or `intermediate`, and `data-lat`/`data-lng` (7 decimals); the
/// vehicle also `data-heading` when known and `data-stale="true"` when its location is stale
/// (then drawn dimmed, with its "last seen …" text beside it), an intermediate destination
/// `data-index`.
/// Routes and markers are drawn by z-index, ties in the rendering's order. The same
/// rendering and size always give the same bytes.
public struct SVGRenderer: Sendable, Hashable {
  /// The viewport's width, in SVG user units (CSS pixels when shown 1:1); at least 1.
  public var width: Int
  /// The viewport's height; at least 1.
  public var height: Int
  /// The colour under everything, a light grey like an empty map's.
  public var backgroundColor: RGBColor
  /// Whether the ETA and distance texts are written into a corner of the map, for a
  /// snapshot seen on its own; a page with its own status panel can turn it off.
  public var showsCaption: Bool

  /// A renderer of `width` × `height` (800 × 600 by default).
  public init(
    width: Int = 800, height: Int = 600, backgroundColor: RGBColor = RGBColor(hex: 0xE8EAED),
    showsCaption: Bool = true
  ) {
    self.width = width
    self.height = height
    self.backgroundColor = backgroundColor
    self.showsCaption = showsCaption
  }

  /// The projection this renderer uses for `rendering`.
  public func projection(for rendering: TripRendering) -> MercatorProjection {
    MercatorProjection(
      camera: rendering.camera, width: Double(max(1, width)), height: Double(max(1, height)))
  }

  /// The SVG document of `rendering`.
  public func render(_ rendering: TripRendering) -> String {
    let projection = projection(for: rendering)
    let (width, height) = (max(1, self.width), max(1, self.height))
    let caption = [rendering.etaText, rendering.distanceText].compactMap { $0 }
      .joined(separator: " · ")
    let title =
      caption.isEmpty ? "Trip \(rendering.statusName)" : "Trip \(rendering.statusName), \(caption)"
    var svg = SVGDocument()
    svg.open(
      "svg",
      [
        ("xmlns", "http://www.w3.org/2000/svg"), ("width", "\(width)"), ("height", "\(height)"),
        ("viewBox", "0 0 \(width) \(height)"), ("role", "img"), ("aria-label", title),
        ("data-trip-status", rendering.statusName),
      ])
    svg.text("title", title)
    svg.empty(
      "rect",
      [
        ("class", "background"), ("x", "0"), ("y", "0"), ("width", "\(width)"),
        ("height", "\(height)"), ("fill", backgroundColor.hexString),
      ])
    for item in Self.drawingOrder(rendering) {
      switch item {
      case .route(let segment): svg.route(segment, projection)
      case .marker(let marker): svg.marker(marker, at: projection.point(for: marker.position))
      }
    }
    if showsCaption, !caption.isEmpty { svg.caption(caption, height: Double(height)) }
    svg.close("svg")
    return svg.text
  }

  /// The width and height of ``render(marker:)``'s document: the marker's size and outline.
  public static func extent(of marker: MapMarker) -> Double {
    max(1, marker.style.size + 2 * max(0, marker.style.strokeWidth))
  }

  /// One marker alone, centred in a document of ``extent(of:)`` square, with the same shape
  /// and hooks as in ``render(_:)``: for a map that places its markers itself (a slippy
  /// map's marker icons). Its label, if any, overflows the document to the right.
  public func render(marker: MapMarker) -> String {
    let extent = Self.extent(of: marker)
    let (size, corner) = (SVGText.number(extent), SVGText.number(-extent / 2))
    var svg = SVGDocument()
    svg.open(
      "svg",
      [
        ("xmlns", "http://www.w3.org/2000/svg"), ("width", size), ("height", size),
        ("viewBox", "\(corner) \(corner) \(size) \(size)"), ("overflow", "visible"),
      ])
    svg.marker(marker, at: MercatorProjection.Point(x: 0, y: 0))
    svg.close("svg")
    return svg.text
  }

  private enum Drawable {
    case route(RouteSegment)
    case marker(MapMarker)
  }

  /// Routes, then markers, ordered by z-index; equal z-indices keep that order (the sort
  /// compares positions too, so it does not depend on the sort being stable).
  private static func drawingOrder(_ rendering: TripRendering) -> [Drawable] {
    let items =
      rendering.routeSegments.map { (z: $0.zIndex, item: Drawable.route($0)) }
      + rendering.markers.map { (z: $0.style.zIndex, item: Drawable.marker($0)) }
    return items.enumerated()
      .sorted { ($0.element.z, $0.offset) < ($1.element.z, $1.offset) }
      .map(\.element.item)
  }
}
