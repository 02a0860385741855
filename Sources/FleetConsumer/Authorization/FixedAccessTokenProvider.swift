/// A provider that always returns the same token: for tests, tools, and tokens minted
/// elsewhere for one trip.
public struct FixedAccessTokenProvider: AccessTokenProvider {
  private let token: AccessToken

  /// Returns `token` for every trip. A token without `expiresAt` that is a JWT gets its own
  /// `exp` claim as its expiry, so it is not used past it.
  public init(_ token: AccessToken) {
    self.token = token.withJWTExpiry()
  }

  /// Returns the token given at initialisation.
  public func accessToken(for context: AuthorizationContext) async throws -> AccessToken {
    token
  }
}
