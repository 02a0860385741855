import Foundation

/// Steps of a fake Fleet Engine script (Tests/Python/fake_fleet_engine.py), built in Swift.
///
/// Trips are written in protobuf's JSON mapping, which Google's classes parse on the server:
/// `["tripStatus": "NEW", "lastLocation": ["location": point(52.5, 13.4)]]`.
enum FakeScript {
  /// One answer to one `GetTrip`.
  struct Step: @unchecked Sendable {
    // @unchecked: built from literals of JSON-compatible values and only read afterwards.
    var json: [String: Any]

    /// Answer with this trip.
    static func trip(_ fields: [String: Any], requireToken: String? = nil) -> Step {
      var json: [String: Any] = ["trip": fields]
      if let requireToken { json["requireToken"] = requireToken }
      return Step(json: json)
    }

    /// End the call with status `code` (a name, e.g. "UNAVAILABLE") and `message`.
    static func error(_ code: String, _ message: String, retryDelayMs: Int? = nil) -> Step {
      var error: [String: Any] = ["code": code, "message": message]
      if let retryDelayMs { error["retryDelayMs"] = retryDelayMs }
      return Step(json: ["error": error])
    }

    /// The same step, answered after `milliseconds`.
    func delayed(_ milliseconds: Int) -> Step {
      var json = self.json
      json["delayMs"] = milliseconds
      return Step(json: json)
    }
  }

  static func point(_ latitude: Double, _ longitude: Double) -> [String: Any] {
    ["latitude": latitude, "longitude": longitude]
  }

  /// A `TerminalLocation` at a point.
  static func location(_ latitude: Double, _ longitude: Double) -> [String: Any] {
    ["point": point(latitude, longitude)]
  }

  /// A timestamp `seconds` after 1970, in RFC 3339.
  static func time(_ seconds: Int, nanos: Int = 0) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    let base = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    guard nanos != 0 else { return base }
    return base.replacingOccurrences(of: "Z", with: String(format: ".%09dZ", nanos))
  }

  /// A fresh trip name of provider `provider`, unique to the calling test.
  static func tripName(provider: String = FleetTest.provider, _ label: String = "trip") -> String {
    "providers/\(provider)/trips/\(label)-\(UUID().uuidString.prefix(8).lowercased())"
  }
}
