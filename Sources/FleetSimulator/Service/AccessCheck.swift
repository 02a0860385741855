internal import Foundation
internal import GRPCWire
internal import FleetSync

/// Checks the bearer token of a call against the simulator's ``TokenPolicy``.
///
/// Tokens are never echoed in errors or logs.
struct AccessCheck: Sendable {
  let policy: TokenPolicy

  /// What a call's token grants.
  enum Grant: Equatable, Sendable {
    case allTrips
    case trip(String)
  }

  /// What the call's token grants; UNAUTHENTICATED when it has no usable token. Under
  /// ``TokenPolicy/anyBearerToken`` any token grants every trip.
  func authenticate(_ metadata: Metadata, now: Date = Date()) throws(RPCError) -> Grant {
    let token = try Self.bearerToken(metadata)
    switch policy {
    case .anyBearerToken: return .allTrips
    case .perTrip: return try Self.grant(of: token, now: now)
    }
  }

  /// Passes when `grant` covers trip `tripID` (nil: every trip, as SearchTrips needs);
  /// PERMISSION_DENIED otherwise.
  func authorize(_ grant: Grant, tripID: String?) throws(RPCError) {
    switch grant {
    case .allTrips:
      return
    case .trip(let granted):
      guard let tripID else {
        throw FleetEngineError.permissionDenied(
          "this call needs a token for every trip (tripid '*'); the token is for one trip",
          tripID: nil)
      }
      guard granted == tripID else {
        throw FleetEngineError.permissionDenied(
          "the token is for another trip, not \(tripID)", tripID: tripID)
      }
    }
  }

  /// The token of `authorization: Bearer <token>`: a slice of the metadata value, since
  /// under ``TokenPolicy/anyBearerToken`` nobody reads it.
  static func bearerToken(_ metadata: Metadata) throws(RPCError) -> Substring {
    guard let value = metadata.first("authorization") else {
      throw FleetEngineError.unauthenticated(
        "the call has no authorization metadata: send 'authorization: Bearer <token>'",
        reason: "CREDENTIALS_MISSING")
    }
    // The common exact form, `Bearer <token>` with no stray spaces, skips Foundation's
    // trimming, which costs more than the rest of a GetTrip's checks together. The token
    // starts with an ASCII character, so its 7th byte is its 7th Character too.
    let utf8 = value.utf8
    if utf8.count > 7, utf8.starts(with: "Bearer ".utf8),
      let first = utf8.dropFirst(7).first, first > 0x20, first < 0x7F,
      let last = utf8.last, last > 0x20, last < 0x7F
    {
      return value[utf8.index(utf8.startIndex, offsetBy: 7)...]
    }
    let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
    guard parts.count == 2, parts[0].lowercased() == "bearer" else {
      throw FleetEngineError.unauthenticated(
        "the authorization metadata is not 'Bearer <token>'", reason: "CREDENTIALS_MISSING")
    }
    let token = parts[1].trimmingCharacters(in: .whitespaces)
    guard !token.isEmpty else {
      throw FleetEngineError.unauthenticated(
        "the bearer token is empty", reason: "CREDENTIALS_MISSING")
    }
    return token[...]
  }

  /// What `token` grants under the per-trip policy.
  static func grant(of token: Substring, now: Date) throws(RPCError) -> Grant {
    if token.hasPrefix("sim:") {
      let tripID = String(token.dropFirst(4))
      guard !tripID.isEmpty else { throw invalidToken() }
      return tripID == "*" ? .allTrips : .trip(tripID)
    }
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let payload = base64URLDecoded(parts[1]),
      let claims = try? JSONDecoder().decode(Claims.self, from: payload)
    else { throw invalidToken() }
    if let expiry = claims.exp, Date(timeIntervalSince1970: expiry) <= now {
      throw FleetEngineError.unauthenticated(
        "the token expired at \(Int64(expiry)) (seconds since 1970); fetch a new one",
        reason: "ACCESS_TOKEN_EXPIRED")
    }
    guard let tripID = claims.authorization?.tripid, !tripID.isEmpty else {
      throw FleetEngineError.permissionDenied(
        "the token has no authorization.tripid claim, so it grants no trip", tripID: nil)
    }
    return tripID == "*" ? .allTrips : .trip(tripID)
  }

  private static func invalidToken() -> RPCError {
    FleetEngineError.unauthenticated(
      "the token is not valid: expected sim:<trip_id> or a JWT with an authorization.tripid "
        + "claim", reason: "ACCESS_TOKEN_INVALID")
  }

  private struct Claims: Decodable {
    struct Authorization: Decodable {
      var tripid: String?
    }
    var authorization: Authorization?
    var exp: Double?
  }

  private static func base64URLDecoded(_ text: Substring) -> Data? {
    Base64.decode(text, alphabet: .url).map { Data($0) }
  }
}
