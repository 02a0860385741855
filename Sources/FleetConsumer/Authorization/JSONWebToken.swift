internal import Foundation

/// The pieces of JSON Web Tokens (RFC 7519) that FleetConsumer writes and reads: base64url
/// without padding (RFC 7515 section 2), JSON strings written byte for byte, and the `exp`
/// claim of a token someone else minted.
enum JSONWebToken {
  /// `bytes` in base64url without padding (RFC 7515 appendix C).
  static func base64URL<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
    Data(bytes).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }

  /// The bytes of a base64url segment without padding; nil when `segment` has any other
  /// character (padding included) or a length no encoding produces.
  static func decodeBase64URL(_ segment: Substring) -> Data? {
    let alphabet = segment.utf8.allSatisfy { byte in
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
        true
      default:
        false
      }
    }
    guard alphabet, segment.utf8.count % 4 != 1 else { return nil }
    var base64 = segment.replacingOccurrences(of: "-", with: "+")
      .replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
    return Data(base64Encoded: base64)
  }

  /// `text` as a JSON string literal, quotes included: `"`, `\` and control characters
  /// escaped (RFC 8259 section 7), everything else as it is, so the bytes signed are exactly
  /// the bytes a reader sees.
  static func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }

  /// The `exp` claim of `token` when it is a JWT: three base64url segments (RFC 7515's
  /// compact serialisation) whose middle one is a JSON object with a numeric `exp` (seconds
  /// since 1970, RFC 7519 section 4.1.4). Anything else — an opaque token, a malformed or
  /// truncated JWT, an `exp` that is not a finite number — is nil, never an error: the token
  /// is then used as one without a known expiry. The signature is not checked; the expiry
  /// only decides when to ask for a new token.
  static func expiry(of token: String) -> Date? {
    let segments = token.split(separator: ".", omittingEmptySubsequences: false)
    guard segments.count == 3, !segments[0].isEmpty, !segments[1].isEmpty,
      let payload = decodeBase64URL(segments[1]),
      let claims = try? JSONDecoder().decode(ExpiryClaim.self, from: payload),
      let exp = claims.exp, exp.isFinite
    else { return nil }
    return Date(timeIntervalSince1970: exp)
  }

  /// The one claim ``expiry(of:)`` reads; JSONDecoder refuses a string or a boolean `exp`,
  /// where JSONSerialization's NSNumber would pass `true` as 1.
  private struct ExpiryClaim: Decodable {
    var exp: Double?
  }
}
