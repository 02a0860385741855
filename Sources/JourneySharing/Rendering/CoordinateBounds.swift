public import FleetConsumer

/// A latitude-longitude rectangle: the SDK's `GMSCoordinateBounds`, without crossing the
/// antimeridian (a route across ±180° is framed the long way round).
public struct CoordinateBounds: Sendable, Hashable {
  /// The southern edge, in degrees.
  public var south: Double
  /// The western edge, in degrees.
  public var west: Double
  /// The northern edge, in degrees.
  public var north: Double
  /// The eastern edge, in degrees.
  public var east: Double

  /// The bounds with these edges; south should not exceed north, nor west east.
  public init(south: Double, west: Double, north: Double, east: Double) {
    self.south = south
    self.west = west
    self.north = north
    self.east = east
  }

  /// The smallest bounds holding every valid point of `points`; nil when there is none.
  /// Points outside ±90° latitude or ±180° longitude, or not finite (a broken server's), are
  /// not fitted.
  public init?(fitting points: some Sequence<GoogleType.LatLng>) {
    var bounds: CoordinateBounds?
    for point in points where Self.isValid(point) {
      if var fitted = bounds {
        fitted.south = min(fitted.south, point.latitude)
        fitted.north = max(fitted.north, point.latitude)
        fitted.west = min(fitted.west, point.longitude)
        fitted.east = max(fitted.east, point.longitude)
        bounds = fitted
      } else {
        bounds = CoordinateBounds(
          south: point.latitude, west: point.longitude, north: point.latitude,
          east: point.longitude)
      }
    }
    guard let bounds else { return nil }
    self = bounds
  }

  /// The whole map Web Mercator can show: the camera of a trip with nothing to fit.
  public static let world = CoordinateBounds(
    south: -MercatorLimit.latitude, west: -180, north: MercatorLimit.latitude, east: 180)

  /// Whether `point` lies inside or on the edges.
  public func contains(_ point: GoogleType.LatLng) -> Bool {
    (south...north).contains(point.latitude) && (west...east).contains(point.longitude)
  }

  /// These bounds grown around their centre to at least `span` degrees each way, and kept
  /// within ±90° latitude and ±180° longitude.
  public func expanded(toMinimumSpan span: Double) -> CoordinateBounds {
    func grow(_ low: Double, _ high: Double, limit: Double) -> (Double, Double) {
      guard high - low < span else { return (low, high) }
      let middle = (low + high) / 2
      var (newLow, newHigh) = (middle - span / 2, middle + span / 2)
      // Against an edge of the map, grow away from it.
      if newLow < -limit { (newLow, newHigh) = (-limit, min(limit, -limit + span)) }
      if newHigh > limit { (newLow, newHigh) = (max(-limit, limit - span), limit) }
      return (newLow, newHigh)
    }
    let (south, north) = grow(south, north, limit: 90)
    let (west, east) = grow(west, east, limit: 180)
    return CoordinateBounds(south: south, west: west, north: north, east: east)
  }

  static func isValid(_ point: GoogleType.LatLng) -> Bool {
    point.latitude.isFinite && point.longitude.isFinite && (-90...90).contains(point.latitude)
      && (-180...180).contains(point.longitude)
  }
}

/// Where Web Mercator stops: the latitude at which the square world map ends (its y reaches
/// the map's edge), about ±85.05°.
enum MercatorLimit {
  static let latitude = 85.051_128_779_806_59
}
