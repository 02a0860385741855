/// Google's encoded polyline format: coordinates rounded to 1e-5 degrees, each stored as the
/// difference from the previous point, zig-zag encoded, in 5-bit chunks offset by 63.
///
/// The algorithm is Google's (developers.google.com/maps/documentation/utilities/
/// polylinealgorithm); Fleet Engine uses it for `Trip.current_route_segment` and
/// `ConsumableTrafficPolyline.encoded_path_to_waypoint`.
enum PolylineEncoding {
  /// The encoded form of `points`.
  static func encode(_ points: some Sequence<GeoPoint>) -> String {
    var bytes: [UInt8] = []
    var previousLatitude = 0
    var previousLongitude = 0
    for point in points {
      let latitude = Int((point.latitude * 1e5).rounded())
      let longitude = Int((point.longitude * 1e5).rounded())
      appendValue(latitude - previousLatitude, to: &bytes)
      appendValue(longitude - previousLongitude, to: &bytes)
      previousLatitude = latitude
      previousLongitude = longitude
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func appendValue(_ value: Int, to bytes: inout [UInt8]) {
    // Zig-zag: the sign moves to the lowest bit, so small negatives stay short.
    var rest = value < 0 ? ~(value << 1) : value << 1
    while rest >= 0x20 {
      bytes.append(UInt8((0x20 | (rest & 0x1F)) + 63))
      rest >>= 5
    }
    bytes.append(UInt8(rest + 63))
  }

  /// The points of `encoded`, or nil when it is not a valid encoded polyline.
  static func decode(_ encoded: String) -> [GeoPoint]? {
    let bytes = Array(encoded.utf8)
    var index = 0
    var values: [Int] = []
    while index < bytes.count {
      var result = 0
      var shift = 0
      while true {
        guard index < bytes.count, shift < 60 else { return nil }
        let chunk = Int(bytes[index]) - 63
        index += 1
        guard (0..<64).contains(chunk) else { return nil }
        result |= (chunk & 0x1F) << shift
        shift += 5
        if chunk < 0x20 { break }
      }
      values.append(result & 1 == 1 ? ~(result >> 1) : result >> 1)
    }
    guard values.count.isMultiple(of: 2) else { return nil }
    var points: [GeoPoint] = []
    var latitude = 0
    var longitude = 0
    for pair in stride(from: 0, to: values.count, by: 2) {
      latitude += values[pair]
      longitude += values[pair + 1]
      points.append(GeoPoint(latitude: Double(latitude) / 1e5, longitude: Double(longitude) / 1e5))
    }
    return points
  }
}
