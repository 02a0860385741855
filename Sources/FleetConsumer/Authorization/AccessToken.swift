public import FoundationEssentials

/// An access token and when it expires.
///
/// `description` never shows the token itself, so a token can be logged by accident without
/// leaking.
public struct AccessToken: Sendable, Hashable, CustomStringConvertible {
  /// The token, sent as `authorization: Bearer <token>`.
  public var token: String
  /// When it stops being valid; nil when unknown. A ``TripService`` then uses the token's own
  /// `exp` claim when it is a JWT, and otherwise uses it until the server answers
  /// UNAUTHENTICATED.
  public var expiresAt: Date?

  /// `token`, valid until `expiresAt` (nil: unknown).
  public init(_ token: String, expiresAt: Date? = nil) {
    self.token = token
    self.expiresAt = expiresAt
  }

  /// `AccessToken(<n characters>, expires <date>)`, without the token.
  public var description: String {
    let expiry = expiresAt.map { "expires \($0)" } ?? "no expiry"
    return "AccessToken(<\(token.count) characters>, \(expiry))"
  }
}
