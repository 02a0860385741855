internal import Foundation
public import RouteGuideProtos

/// The features the server knows, read from a JSON file in the format of gRPC's
/// `route_guide_db.json`: `[{"location": {"latitude": …, "longitude": …}, "name": "…"}, …]`.
public enum Features {
  private struct Entry: Decodable {
    struct Location: Decodable {
      var latitude: Int32
      var longitude: Int32
    }
    var location: Location
    var name: String
  }

  /// Throws when the file cannot be read or is not such JSON.
  public static func load(_ path: String) throws -> [Routeguide.Feature] {
    let entries = try JSONDecoder().decode(
      [Entry].self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    return entries.map { entry in
      var feature = Routeguide.Feature()
      feature.name = entry.name
      feature.location = .at(entry.location.latitude, entry.location.longitude)
      return feature
    }
  }
}

extension Routeguide.Point {
  /// The point at `latitude`, `longitude` (degrees times 10^7, as route_guide.proto has them).
  public static func at(_ latitude: Int32, _ longitude: Int32) -> Routeguide.Point {
    var point = Routeguide.Point()
    point.latitude = latitude
    point.longitude = longitude
    return point
  }

  /// The great-circle distance to `other` in whole metres, by the haversine formula, as gRPC's
  /// route guide examples compute it (Earth's radius 6,371 km).
  public func distance(to other: Routeguide.Point) -> Int32 {
    let factor = 1e7
    let radius = 6_371_000.0
    let lat1 = Double(latitude) / factor * .pi / 180
    let lat2 = Double(other.latitude) / factor * .pi / 180
    let lon1 = Double(longitude) / factor * .pi / 180
    let lon2 = Double(other.longitude) / factor * .pi / 180
    let a =
      sin((lat2 - lat1) / 2) * sin((lat2 - lat1) / 2)
      + cos(lat1) * cos(lat2) * sin((lon2 - lon1) / 2) * sin((lon2 - lon1) / 2)
    let c = 2 * atan2(a.squareRoot(), (1 - a).squareRoot())
    return Int32(radius * c)
  }
}
