public import Foundation
internal import FleetSync

/// Bearer tokens the simulator's ``TokenPolicy/perTrip`` policy accepts, for tests and demos.
///
/// They grant nothing anywhere else: the JWT form is not signed (its signature part is a
/// fixed placeholder the simulator does not check).
public enum SimulatorToken {
  /// `sim:<tripID>`, or `sim:*` for every trip when `tripID` is nil.
  public static func simple(tripID: String?) -> String {
    "sim:\(tripID ?? "*")"
  }

  /// A JWT-shaped token with Fleet Engine's consumer claim `authorization.tripid` (`*` when
  /// `tripID` is nil) and, when given, `exp`.
  public static func jwt(tripID: String?, expiresAt: Date? = nil) -> String {
    let header = #"{"alg":"none","typ":"JWT"}"#
    var claims = #"{"authorization":{"tripid":\#(jsonString(tripID ?? "*"))}"#
    if let expiresAt {
      claims += #","exp":\#(Int64(expiresAt.timeIntervalSince1970.rounded(.down)))"#
    }
    claims += "}"
    return "\(base64URL(header)).\(base64URL(claims)).unsigned"
  }

  private static func base64URL(_ text: String) -> String {
    Base64.encodeUnpadded(text.utf8, alphabet: .url)
  }

  private static func jsonString(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case _ where scalar.value < 0x20:
        result +=
          "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
          + String(scalar.value, radix: 16)
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }
}
