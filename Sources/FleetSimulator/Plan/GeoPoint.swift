internal import FleetProtos
internal import Foundation  // cos, atan2

/// A position in degrees, with the flat-earth arithmetic a city-sized simulation needs.
///
/// Distances use the equirectangular approximation around the two points' mean latitude:
/// within a few kilometres it is off by well under a metre, and it is cheap and exactly
/// repeatable, which the trip plans rely on.
struct GeoPoint: Hashable, Sendable {
  var latitude: Double
  var longitude: Double

  /// Metres per degree of latitude (WGS84 mean).
  static let metersPerDegreeLatitude = 111_320.0

  init(latitude: Double, longitude: Double) {
    self.latitude = latitude
    self.longitude = longitude
  }

  init(_ latLng: GoogleType.LatLng) {
    self.init(latitude: latLng.latitude, longitude: latLng.longitude)
  }

  /// The protobuf form.
  var latLng: GoogleType.LatLng {
    var latLng = GoogleType.LatLng()
    latLng.latitude = latitude
    latLng.longitude = longitude
    return latLng
  }

  /// Whether this is a usable position (not NaN, within the coordinate ranges).
  var isValid: Bool {
    (-90...90).contains(latitude) && (-180...180).contains(longitude)
  }

  /// Metres per degree of longitude at this latitude.
  var metersPerDegreeLongitude: Double {
    Self.metersPerDegreeLatitude * cos(latitude * .pi / 180)
  }

  /// The point `north` metres north and `east` metres east of this one.
  func offset(north: Double, east: Double) -> GeoPoint {
    GeoPoint(
      latitude: latitude + north / Self.metersPerDegreeLatitude,
      longitude: longitude + east / metersPerDegreeLongitude)
  }

  /// How far `other` is north and east of this point, in metres.
  func displacement(to other: GeoPoint) -> (north: Double, east: Double) {
    let meanLatitude = (latitude + other.latitude) / 2
    let perDegreeLongitude = Self.metersPerDegreeLatitude * cos(meanLatitude * .pi / 180)
    return (
      (other.latitude - latitude) * Self.metersPerDegreeLatitude,
      (other.longitude - longitude) * perDegreeLongitude
    )
  }

  /// The distance to `other` in metres.
  func distance(to other: GeoPoint) -> Double {
    let (north, east) = displacement(to: other)
    return (north * north + east * east).squareRoot()
  }

  /// The compass bearing towards `other`, in degrees: 0 north, 90 east, in 0..<360.
  func bearing(to other: GeoPoint) -> Double {
    let (north, east) = displacement(to: other)
    let degrees = atan2(east, north) * 180 / .pi
    return degrees < 0 ? degrees + 360 : degrees
  }

  /// The point a `fraction` (0...1) of the way from this one to `other`.
  func interpolated(to other: GeoPoint, fraction: Double) -> GeoPoint {
    GeoPoint(
      latitude: latitude + (other.latitude - latitude) * fraction,
      longitude: longitude + (other.longitude - longitude) * fraction)
  }
}
