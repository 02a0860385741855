import FleetConsumer
import JourneySharing
import Testing

@Suite("Camera and projection")
struct CameraTests {
  private typealias F = TripFixtures

  @Test("the camera's bounds contain every route point and marker")
  func boundsContainEverything() {
    let rendering = TripRendering(trip: F.enrouteToPickup(), now: F.now)
    let points = rendering.routeSegments.flatMap(\.points) + rendering.markers.map(\.position)
    #expect(points.count > 10)
    for point in points { #expect(rendering.camera.bounds.contains(point), "\(point)") }
    #expect(rendering.camera.padding == 40)
  }

  @Test("every point lands inside the viewport, at least the padding away from each edge")
  func projectedWithPadding() {
    let rendering = TripRendering(trip: F.enrouteToPickup(), now: F.now)
    for (width, height) in [(800, 600), (320, 640), (1000, 200)] {
      let projection = SVGRenderer(width: width, height: height).projection(for: rendering)
      let padding = rendering.camera.padding
      for point in rendering.routeSegments.flatMap(\.points) + rendering.markers.map(\.position) {
        let projected = projection.point(for: point)
        #expect(projected.x >= padding - 1e-9 && projected.x <= Double(width) - padding + 1e-9)
        #expect(projected.y >= padding - 1e-9 && projected.y <= Double(height) - padding + 1e-9)
      }
    }
  }

  @Test("the bounds' corners map into the viewport: tight on one axis, centred on the other")
  func cornersMapIntoViewport() {
    let bounds = CoordinateBounds(south: 47.3, west: 8.4, north: 47.5, east: 8.7)
    let camera = Camera(bounds: bounds, padding: 20)
    let projection = MercatorProjection(camera: camera, width: 800, height: 600)
    let northWest = projection.point(for: F.point(bounds.north, bounds.west))
    let southEast = projection.point(for: F.point(bounds.south, bounds.east))
    let southWest = projection.point(for: F.point(bounds.south, bounds.west))
    let northEast = projection.point(for: F.point(bounds.north, bounds.east))
    // North is up, west is left, and the rectangle stays a rectangle.
    #expect(northWest.x < southEast.x && northWest.y < southEast.y)
    #expect(abs(southWest.x - northWest.x) < 1e-9 && abs(southWest.y - southEast.y) < 1e-9)
    #expect(abs(northEast.x - southEast.x) < 1e-9 && abs(northEast.y - northWest.y) < 1e-9)
    for corner in [northWest, southEast] {
      #expect((20 - 1e-9...780 + 1e-9).contains(corner.x))
      #expect((20 - 1e-9...580 + 1e-9).contains(corner.y))
    }
    let touchesX = abs(northWest.x - 20) < 1e-6 && abs(southEast.x - 780) < 1e-6
    let touchesY = abs(northWest.y - 20) < 1e-6 && abs(southEast.y - 580) < 1e-6
    #expect(touchesX || touchesY)
    #expect(abs((northWest.x + southEast.x) / 2 - 400) < 1e-6)
    #expect(abs((northWest.y + southEast.y) / 2 - 300) < 1e-6)
  }

  @Test("one scale on both axes: a square in Mercator units stays square")
  func uniformScale() {
    let projection = MercatorProjection(
      camera: Camera(
        bounds: CoordinateBounds(south: -10, west: -10, north: 10, east: 10), padding: 0),
      width: 1000, height: 500)
    let a = projection.point(for: F.point(0, 0))
    let b = projection.point(for: F.point(0, 1))
    let c = projection.point(for: F.point(1, 0))
    // Near the equator one degree north is about as long as one degree east.
    #expect(abs((b.x - a.x) - (a.y - c.y)) / (b.x - a.x) < 0.001)
  }

  @Test("a single point is shown with the minimum span around it")
  func singlePoint() {
    var trip = FleetEngine.Trip()
    trip.pickupPoint = F.terminal(47.37, 8.54)
    let camera = TripRendering(trip: trip, now: F.now).camera
    #expect(abs(camera.bounds.north - camera.bounds.south - 0.005) < 1e-9)
    #expect(abs(camera.bounds.east - camera.bounds.west - 0.005) < 1e-9)
    #expect(camera.bounds.contains(F.point(47.37, 8.54)))
  }

  @Test("near the map's edge the minimum span grows away from it")
  func spanAtTheEdge() {
    let bounds = CoordinateBounds(south: 89.999, west: 179.999, north: 90, east: 180)
      .expanded(toMinimumSpan: 0.01)
    #expect(bounds == CoordinateBounds(south: 89.99, west: 179.99, north: 90, east: 180))
  }

  @Test("invalid coordinates are not fitted")
  func invalidCoordinates() {
    let bounds = CoordinateBounds(
      fitting: [F.point(.nan, 1), F.point(91, 0), F.point(1, 2), F.point(0, .infinity)])
    #expect(bounds == CoordinateBounds(south: 1, west: 2, north: 1, east: 2))
    #expect(CoordinateBounds(fitting: [F.point(.nan, .nan)]) == nil)
  }
}
