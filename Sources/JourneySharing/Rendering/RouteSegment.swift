public import FleetConsumer

/// A stretch of route of one speed, ready to draw: its points (at least two, the first being
/// the last of the segment before it on the same leg) and the colour and width its leg's
/// ``PolylineStyleOptions`` give it.
public struct RouteSegment: Sendable, Hashable {
  /// The polyline the segment belongs to.
  public var leg: RouteLeg
  /// The traffic on this stretch; ``SpeedType/noData`` where no reading covers it.
  public var speed: SpeedType
  /// The points, in driving order.
  public var points: [GoogleType.LatLng]
  /// The colour: ``PolylineStyleOptions/trafficColor(for:)`` of ``speed``.
  public var color: RGBColor
  /// The line's width: its leg's ``PolylineStyleOptions/strokeWidth``.
  public var width: Double
  /// Its leg's ``PolylineStyleOptions/zIndex``.
  public var zIndex: Int32

  /// A segment with these points and style; ``segments(of:traffic:leg:style:)`` makes them
  /// from a path.
  public init(
    leg: RouteLeg, speed: SpeedType, points: [GoogleType.LatLng], color: RGBColor,
    width: Double, zIndex: Int32
  ) {
    self.leg = leg
    self.speed = speed
    self.points = points
    self.color = color
    self.width = width
    self.zIndex = zIndex
  }
}
