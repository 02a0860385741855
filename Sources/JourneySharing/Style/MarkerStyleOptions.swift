/// How a marker is drawn: fill, outline, size, visibility and drawing order, per
/// ``MarkerKind`` (the SDK's marker style options per `GMTCCustomizableMarkerType`).
///
/// The shape comes with the kind (a vehicle is a disc with a heading arrow, pickup a ring,
/// drop-off a square, an intermediate destination a diamond); sizes are in the renderer's
/// units.
public struct MarkerStyleOptions: Sendable, Hashable {
  /// The colour inside the shape.
  public var fillColor: RGBColor
  /// The outline's colour.
  public var strokeColor: RGBColor
  /// The outline's width.
  public var strokeWidth: Double
  /// The width and height of the shape.
  public var size: Double
  /// Whether the marker is drawn at all. An invisible marker is left out of the rendering,
  /// and the camera does not fit it.
  public var isVisible: Bool
  /// Drawing order among polylines and markers: higher is drawn on top.
  public var zIndex: Int32

  /// A style; the defaults are a 16-unit shape with a 2-unit white outline at z-index 20.
  public init(
    fillColor: RGBColor, strokeColor: RGBColor = .white, strokeWidth: Double = 2,
    size: Double = 16, isVisible: Bool = true, zIndex: Int32 = 20
  ) {
    self.fillColor = fillColor
    self.strokeColor = strokeColor
    self.strokeWidth = strokeWidth
    self.size = size
    self.isVisible = isVisible
    self.zIndex = zIndex
  }

  /// The vehicle: a route-blue disc with a white outline and arrow, above everything.
  public static let vehicle = MarkerStyleOptions(
    fillColor: .routeBlue, strokeColor: .white, strokeWidth: 3, size: 24, zIndex: 30)
  /// The pickup point: a white ring with a dark outline.
  public static let pickup = MarkerStyleOptions(
    fillColor: .white, strokeColor: .nearBlack, strokeWidth: 4, size: 18)
  /// The drop-off point: a dark square with a white outline.
  public static let dropoff = MarkerStyleOptions(
    fillColor: .nearBlack, strokeColor: .white, strokeWidth: 2, size: 18)
  /// An intermediate destination: a small white diamond with a grey outline.
  public static let intermediateDestination = MarkerStyleOptions(
    fillColor: .white, strokeColor: RGBColor(hex: 0x5F6368), strokeWidth: 3, size: 16)
}
