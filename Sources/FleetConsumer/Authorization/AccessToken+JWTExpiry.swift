extension AccessToken {
  /// This token, with its JWT's `exp` as `expiresAt` when it has no expiry of its own and is
  /// a JWT (``JSONWebToken/expiry(of:)``); otherwise unchanged.
  ///
  /// The built-in providers apply it to what they return, and `TokenCache` to every
  /// provider's tokens, so a JWT is refreshed before its `exp` however it came in.
  func withJWTExpiry() -> AccessToken {
    guard expiresAt == nil, let expiry = JSONWebToken.expiry(of: token) else { return self }
    return AccessToken(token, expiresAt: expiry)
  }
}
