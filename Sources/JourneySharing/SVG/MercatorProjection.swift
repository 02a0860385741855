public import FleetConsumer
internal import Foundation

/// Web Mercator (EPSG:3857, the projection of web and phone maps) of a camera into a viewport
/// of `width` × `height` units, y growing downwards.
///
/// The camera's bounds are scaled as large as fits inside the viewport less the padding on
/// every side, the same scale on both axes (so the map is not stretched), and centred; the
/// padding is capped at a quarter of the viewport's smaller side, so that a small viewport
/// still has room for the map. Latitudes beyond ±85.05° are drawn at that edge.
public struct MercatorProjection: Sendable, Hashable {
  /// A point of the viewport.
  public struct Point: Sendable, Hashable {
    /// From the left edge.
    public var x: Double
    /// From the top edge.
    public var y: Double

    /// The point (`x`, `y`).
    public init(x: Double, y: Double) {
      self.x = x
      self.y = y
    }
  }

  /// The viewport's width.
  public let width: Double
  /// The viewport's height.
  public let height: Double
  /// Viewport units per unit of the world map (whose side is 1).
  public let scale: Double
  private let offsetX: Double
  private let offsetY: Double

  /// The projection that fits `camera` into the viewport. A width or height below 1 counts
  /// as 1.
  public init(camera: Camera, width: Double, height: Double) {
    self.width = max(1, width.isFinite ? width : 1)
    self.height = max(1, height.isFinite ? height : 1)
    let padding = min(
      max(0, camera.padding.isFinite ? camera.padding : 0), min(self.width, self.height) / 4)
    let bounds = camera.bounds
    let northWest = Self.world(latitude: bounds.north, longitude: bounds.west)
    let southEast = Self.world(latitude: bounds.south, longitude: bounds.east)
    // Zero-sized bounds do not come from a Camera of TripRendering (it has a minimum span);
    // a hand-made one is shown as a tiny area rather than dividing by zero.
    let spanX = max(southEast.x - northWest.x, 1e-12)
    let spanY = max(southEast.y - northWest.y, 1e-12)
    scale = min((self.width - 2 * padding) / spanX, (self.height - 2 * padding) / spanY)
    offsetX = (self.width - spanX * scale) / 2 - northWest.x * scale
    offsetY = (self.height - spanY * scale) / 2 - northWest.y * scale
  }

  /// Where `coordinate` lands in the viewport (outside it when it lies outside the camera).
  public func point(for coordinate: GoogleType.LatLng) -> Point {
    let world = Self.world(latitude: coordinate.latitude, longitude: coordinate.longitude)
    return Point(x: world.x * scale + offsetX, y: world.y * scale + offsetY)
  }

  /// The point on the world map of side 1 (x east from −180°, y south from the top edge).
  static func world(latitude: Double, longitude: Double) -> Point {
    let limit = MercatorLimit.latitude
    let clamped = min(max(latitude, -limit), limit) * .pi / 180
    let x = (longitude + 180) / 360
    let y = (1 - log(tan(clamped) + 1 / cos(clamped)) / .pi) / 2
    return Point(x: x, y: y)
  }
}
