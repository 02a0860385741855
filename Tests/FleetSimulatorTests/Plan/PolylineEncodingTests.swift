import Testing

@testable import FleetSimulator

@Suite("Google's polyline encoding")
struct PolylineEncodingTests {
  // developers.google.com/maps/documentation/utilities/polylinealgorithm
  static let documented = [
    GeoPoint(latitude: 38.5, longitude: -120.2), GeoPoint(latitude: 40.7, longitude: -120.95),
    GeoPoint(latitude: 43.252, longitude: -126.453),
  ]

  @Test("encodes Google's documented example exactly")
  func documentedExample() {
    #expect(PolylineEncoding.encode(Self.documented) == "_p~iF~ps|U_ulLnnqC_mqNvxq`@")
  }

  @Test("decodes what it encodes, to 1e-5 degrees")
  func roundTrip() throws {
    var random = SplitMix64(seed: 7)
    let points = (0..<200).map { _ in
      GeoPoint(latitude: random.uniform(-89...89), longitude: random.uniform(-179...179))
    }
    let decoded = try #require(PolylineEncoding.decode(PolylineEncoding.encode(points)))
    #expect(decoded.count == points.count)
    for (original, back) in zip(points, decoded) {
      #expect(abs(original.latitude - back.latitude) <= 0.5e-5 + 1e-12)
      #expect(abs(original.longitude - back.longitude) <= 0.5e-5 + 1e-12)
    }
  }

  @Test("rejects malformed input", arguments: ["_p~iF~ps|U_", "_p~iF", "a b", "\u{7F}\u{7F}"])
  func malformed(_ text: String) {
    #expect(PolylineEncoding.decode(text) == nil)
  }

  @Test("an empty polyline is the empty string")
  func empty() {
    #expect(PolylineEncoding.encode([]) == "")
    #expect(PolylineEncoding.decode("") == [])
  }
}
