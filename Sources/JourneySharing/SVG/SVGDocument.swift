internal import FleetConsumer

/// An SVG document being written, element by element; every attribute value and text
/// escaped on the way in.
struct SVGDocument {
  private(set) var text = ""

  mutating func open(_ name: String, _ attributes: [(String, String)]) {
    text += "<\(name)\(Self.attributes(attributes))>\n"
  }

  mutating func close(_ name: String) { text += "</\(name)>\n" }

  mutating func empty(_ name: String, _ attributes: [(String, String)]) {
    text += "<\(name)\(Self.attributes(attributes))/>\n"
  }

  mutating func text(_ name: String, _ content: String, _ attributes: [(String, String)] = []) {
    text += "<\(name)\(Self.attributes(attributes))>\(SVGText.escaped(content))</\(name)>\n"
  }

  private static func attributes(_ attributes: [(String, String)]) -> String {
    attributes.map { " \($0.0)=\"\(SVGText.escaped($0.1))\"" }.joined()
  }

  /// The colour attributes `fill`/`stroke` (and their opacity when not 1) of `color`.
  static func paint(_ property: String, _ color: RGBColor) -> [(String, String)] {
    var attributes = [(property, color.hexString)]
    if color.opacity != 1 {
      attributes.append(("\(property)-opacity", SVGText.number(min(max(color.opacity, 0), 1))))
    }
    return attributes
  }

  static func number(_ value: Double) -> String { SVGText.number(value) }
}

extension SVGDocument {
  mutating func route(_ segment: RouteSegment, _ projection: MercatorProjection) {
    let points = segment.points.map { coordinate in
      let point = projection.point(for: coordinate)
      return "\(Self.number(point.x)),\(Self.number(point.y))"
    }
    empty(
      "polyline",
      [
        ("data-role", "route"), ("data-leg", segment.leg.rawValue),
        ("data-speed", segment.speed.rawValue), ("points", points.joined(separator: " ")),
        ("fill", "none"),
      ] + Self.paint("stroke", segment.color) + [
        ("stroke-width", Self.number(segment.width)), ("stroke-linecap", "round"),
        ("stroke-linejoin", "round"),
      ])
  }

  mutating func marker(_ marker: MapMarker, at center: MercatorProjection.Point) {
    let (x, y) = (center.x, center.y)
    let style = marker.style
    let half = style.size / 2
    var hooks = [
      ("data-role", marker.kind.rawValue),
      ("data-lat", SVGText.number(marker.position.latitude, decimals: 7)),
      ("data-lng", SVGText.number(marker.position.longitude, decimals: 7)),
    ]
    if let heading = marker.heading { hooks.append(("data-heading", "\(heading)")) }
    if let index = marker.index { hooks.append(("data-index", "\(index)")) }
    let paint =
      Self.paint("fill", style.fillColor) + Self.paint("stroke", style.strokeColor)
      + [("stroke-width", Self.number(style.strokeWidth))]
    switch marker.kind {
    case .vehicle:
      if marker.isStale { hooks.append(("data-stale", "true")) }
      open("g", hooks + [("transform", "translate(\(Self.number(x)) \(Self.number(y)))")])
      // The shape dimmed on its own, so that the label beside it stays readable.
      let dimmed = marker.opacity != 1
      if dimmed { open("g", [("opacity", Self.number(min(max(marker.opacity, 0), 1)))]) }
      empty("circle", [("cx", "0"), ("cy", "0"), ("r", Self.number(half))] + paint)
      if let heading = marker.heading {
        // An arrow pointing north, turned clockwise by the heading (y grows downwards, so
        // SVG's positive rotation is clockwise).
        let (tip, wing, notch) = (half * 0.6, half * 0.45, half * 0.2)
        let n = Self.number
        empty(
          "path",
          [
            ("d", "M0,\(n(-tip)) L\(n(wing)),\(n(wing)) L0,\(n(notch)) L\(n(-wing)),\(n(wing)) Z"),
            ("transform", "rotate(\(heading))"),
          ] + Self.paint("fill", style.strokeColor))
      }
      if dimmed { close("g") }
      if let label = marker.label { self.label(label, x: half + 6) }
      close("g")
    case .pickup:
      empty(
        "circle",
        hooks + [("cx", Self.number(x)), ("cy", Self.number(y)), ("r", Self.number(half))] + paint)
    case .dropoff:
      empty(
        "rect",
        hooks + [
          ("x", Self.number(x - half)), ("y", Self.number(y - half)),
          ("width", Self.number(style.size)), ("height", Self.number(style.size)),
        ] + paint)
    case .intermediateDestination:
      let corners = [(x, y - half), (x + half, y), (x, y + half), (x - half, y)]
      let d = "M" + corners.map { "\(Self.number($0)),\(Self.number($1))" }.joined(separator: " L")
      empty("path", hooks + [("d", d + " Z")] + paint)
    }
  }

  /// `label` beside a marker drawn around (0, 0), starting `x` to its right: dark text with
  /// a white halo, readable on any map.
  mutating func label(_ label: String, x: Double) {
    text(
      "text", label,
      [
        ("class", "marker-label"), ("x", Self.number(x)), ("y", "5"),
        ("font-family", "sans-serif"), ("font-size", "14"), ("paint-order", "stroke"),
      ] + Self.paint("fill", .nearBlack) + Self.paint("stroke", .white)
        + [("stroke-width", "4"), ("stroke-linejoin", "round")])
  }

  /// `caption` in a white box in the bottom-left corner. A generic font family, so nothing
  /// is fetched; the box's width is estimated from the length, as no font metrics are known.
  mutating func caption(_ caption: String, height: Double) {
    let fontSize = 14.0
    let boxWidth = Double(caption.count) * fontSize * 0.6 + 16
    let boxHeight = fontSize + 12
    open("g", [("class", "caption")])
    empty(
      "rect",
      [
        ("x", "8"), ("y", Self.number(height - boxHeight - 8)), ("width", Self.number(boxWidth)),
        ("height", Self.number(boxHeight)), ("rx", "4"),
      ] + Self.paint("fill", RGBColor.white.with(opacity: 0.9)))
    text(
      "text", caption,
      [
        ("x", "16"), ("y", Self.number(height - 8 - boxHeight / 2 + fontSize * 0.35)),
        ("font-family", "sans-serif"), ("font-size", Self.number(fontSize)),
      ] + Self.paint("fill", .nearBlack))
    close("g")
  }
}

extension RGBColor {
  fileprivate func with(opacity: Double) -> RGBColor {
    var color = self
    color.opacity = opacity
    return color
  }
}
