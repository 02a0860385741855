/// How a route polyline is drawn: the Consumer SDK's `GMTCPolylineStyleOptions`.
///
/// `init()` has the SDK's defaults (2-point blue line, z-index 10, traffic off);
/// ``activeRoute`` and ``remainingRoute`` are the looks ``JourneySharingStyle`` starts from.
/// Widths are in the renderer's units (SVG user units: CSS pixels at 1:1). `isGeodesic` has
/// no counterpart: segments are straight lines on the Mercator projection, as the SDK draws
/// them by default.
public struct PolylineStyleOptions: Sendable, Hashable {
  /// The width of the line.
  public var strokeWidth: Double
  /// The colour of the line; with traffic on, the colour of stretches without a reading
  /// unless ``setTrafficColor(_:for:)`` gave ``SpeedType/noData`` one.
  public var strokeColor: RGBColor
  /// Whether the polyline is drawn at all. An invisible polyline is left out of the
  /// rendering, and the camera does not fit it.
  public var isVisible: Bool
  /// Drawing order among polylines and markers: higher is drawn on top; equal values keep
  /// the rendering's order.
  public var zIndex: Int32
  /// Whether stretches are coloured by their traffic speed; when off every stretch has
  /// ``strokeColor``, as in the SDK.
  public var isTrafficEnabled: Bool
  /// The colours set per speed; the others fall back to ``defaultTrafficColor(for:)``.
  private var trafficColors: [SpeedType: RGBColor]

  /// A style; the defaults are the SDK's.
  public init(
    strokeWidth: Double = 2, strokeColor: RGBColor = RGBColor(hex: 0x0000FF),
    isVisible: Bool = true, zIndex: Int32 = 10, isTrafficEnabled: Bool = false
  ) {
    self.strokeWidth = strokeWidth
    self.strokeColor = strokeColor
    self.isVisible = isVisible
    self.zIndex = zIndex
    self.isTrafficEnabled = isTrafficEnabled
    self.trafficColors = [:]
  }

  /// The colour a stretch of `speed` is drawn in: ``strokeColor`` when traffic is off, else
  /// the colour set for `speed`, else its default.
  public func trafficColor(for speed: SpeedType) -> RGBColor {
    guard isTrafficEnabled else { return strokeColor }
    return trafficColors[speed] ?? defaultTrafficColor(for: speed)
  }

  /// Sets the colour of stretches of `speed`; nil restores the default.
  public mutating func setTrafficColor(_ color: RGBColor?, for speed: SpeedType) {
    trafficColors[speed] = color
  }

  /// The colour of `speed` when none is set: green, orange and red for the readings, as on
  /// Google's maps, and the line's own colour where there is no reading.
  public func defaultTrafficColor(for speed: SpeedType) -> RGBColor {
    switch speed {
    case .noData: strokeColor
    case .normal: .trafficGreen
    case .slow: .trafficOrange
    case .trafficJam: .trafficRed
    }
  }

  /// The route from the vehicle to its next stop, coloured by traffic: a 6-unit line in
  /// Google's route blue where there is no reading.
  ///
  /// Unlike the SDK's `init` (traffic off), traffic is on: a share page's map is the one
  /// place the rider sees why the car is late.
  public static let activeRoute = PolylineStyleOptions(
    strokeWidth: 6, strokeColor: .routeBlue, zIndex: 10, isTrafficEnabled: true)

  /// The route beyond the next stop: a thinner grey line under the active route, traffic off.
  public static let remainingRoute = PolylineStyleOptions(
    strokeWidth: 5, strokeColor: .remainingGrey, zIndex: 9, isTrafficEnabled: false)
}
