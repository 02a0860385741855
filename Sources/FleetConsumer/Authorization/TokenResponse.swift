internal import Foundation

/// Reads an access token from the JSON a token command or token endpoint returns, e.g.
/// `{"token": "eyJ…", "expiresAt": 1767225600}` or `{"token": "eyJ…", "expiresInSeconds": 3600}`.
enum TokenResponse {
  /// How the expiration value counts.
  enum ExpirationUnit: Sendable, Hashable {
    case unixSeconds
    case unixMilliseconds
  }

  /// The key of the relative expiry: seconds from when the response is read.
  static let relativeExpirationKey = "expiresInSeconds"

  /// The token under `tokenKey` (a non-empty string) and its expiry: under `expirationKey` (a
  /// number, absolute), or under `expiresInSeconds` (a number of seconds from `now`); the
  /// earlier of the two when both are there. With neither (absent or null), a JWT's own `exp`
  /// is its expiry, and any other token has none. `source` names where the JSON came from,
  /// for error messages, which never quote the JSON (it holds the token).
  static func parse(
    _ data: Data, tokenKey: String, expirationKey: String, unit: ExpirationUnit, source: String,
    now: Date = Date()
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
    let unitName = unit == .unixSeconds ? "seconds" : "milliseconds"
    let absolute = try number(
      fields, expirationKey, source: source, meaning: "a number of \(unitName) since 1970"
    ).map { value in
      Date(timeIntervalSince1970: unit == .unixSeconds ? value : value / 1000)
    }
    // A caller who named the absolute key `expiresInSeconds` means it as the absolute one.
    let relative =
      expirationKey == relativeExpirationKey
      ? nil
      : try number(
        fields, relativeExpirationKey, source: source, meaning: "a number of seconds"
      ).map { now.addingTimeInterval($0) }
    let expiresAt: Date? =
      switch (absolute, relative) {
      case (let absolute?, let relative?): min(absolute, relative)
      case (let absolute?, nil): absolute
      case (nil, let relative?): relative
      case (nil, nil): nil
      }
    return AccessToken(token, expiresAt: expiresAt).withJWTExpiry()
  }

  /// The finite number under `key`; nil when it is absent or null. A boolean is not a number.
  private static func number(
    _ fields: [String: Any], _ key: String, source: String, meaning: String
  ) throws(AccessTokenProviderError) -> Double? {
    switch fields[key] {
    case nil, is NSNull:
      return nil
    // JSONSerialization gives `true` and `false` as NSNumbers too, of type "c" (a C char);
    // a JSON number is never one.
    case let number as NSNumber
    where number.doubleValue.isFinite && String(cString: number.objCType) != "c":
      return number.doubleValue
    default:
      throw AccessTokenProviderError(
        "\(source) returned a \"\(key)\" that is not \(meaning)")
    }
  }
}
