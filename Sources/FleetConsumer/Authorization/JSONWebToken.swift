internal import Foundation
internal import FleetSync

/// The pieces of JSON Web Tokens (RFC 7519) that FleetConsumer writes and reads: base64url
/// without padding (RFC 7515 section 2), JSON strings written byte for byte, and the `exp`
/// claim of a token someone else minted.
enum JSONWebToken {
  /// `bytes` in base64url without padding (RFC 7515 appendix C).
  static func base64URL(_ bytes: some Collection<UInt8>) -> String {
    Base64.encodeUnpadded(bytes, alphabet: .url)
  }

  /// The bytes of a base64url segment without padding; nil when `segment` has any other
  /// character (padding included) or a length no encoding produces.
  static func decodeBase64URL(_ segment: Substring) -> Data? {
    guard !segment.utf8.contains(UInt8(ascii: "=")),
      let bytes = Base64.decode(segment, alphabet: .url)
    else { return nil }
    return Data(bytes)
  }

  /// `text` as a JSON string literal (``JSONText/quoted(_:)``): the bytes signed are exactly
  /// the bytes a reader sees.
  static func jsonString(_ text: String) -> String {
    JSONText.quoted(text)
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
