internal import Foundation

/// Reads an access token from the JSON a token command or token endpoint returns, e.g.
/// `{"token": "eyJ…", "expiresAt": 1767225600}`.
enum TokenResponse {
  /// How the expiration value counts.
  enum ExpirationUnit: Sendable, Hashable {
    case unixSeconds
    case unixMilliseconds
  }

  /// The token under `tokenKey` (a non-empty string) and its expiry under `expirationKey` (a
  /// number; absent or null: no known expiry). `source` names where the JSON came from, for
  /// error messages, which never quote the JSON (it holds the token).
  static func parse(
    _ data: Data, tokenKey: String, expirationKey: String, unit: ExpirationUnit, source: String
  ) throws(AccessTokenProviderError) -> AccessToken {
    let object: Any
    do {
      object = try JSONSerialization.jsonObject(with: data)
    } catch {
      throw AccessTokenProviderError(
        "\(source) did not return JSON (\(data.count) bytes); expected "
          + "{\"\(tokenKey)\": \"…\", \"\(expirationKey)\": <unix time>}")
    }
    guard let fields = object as? [String: Any] else {
      throw AccessTokenProviderError("\(source) returned JSON that is not an object")
    }
    guard let token = fields[tokenKey] as? String, !token.isEmpty else {
      throw AccessTokenProviderError(
        "\(source) returned no non-empty string under \"\(tokenKey)\"")
    }
    var expiresAt: Date?
    switch fields[expirationKey] {
    case nil, is NSNull:
      expiresAt = nil
    case let number as NSNumber where number.doubleValue.isFinite:
      let seconds =
        switch unit {
        case .unixSeconds: number.doubleValue
        case .unixMilliseconds: number.doubleValue / 1000
        }
      expiresAt = Date(timeIntervalSince1970: seconds)
    default:
      throw AccessTokenProviderError(
        "\(source) returned a \"\(expirationKey)\" that is not a number of "
          + (unit == .unixSeconds ? "seconds" : "milliseconds") + " since 1970")
    }
    return AccessToken(token, expiresAt: expiresAt)
  }
}
