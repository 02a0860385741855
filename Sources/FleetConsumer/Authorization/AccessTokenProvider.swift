/// Where a ``TripService`` gets the access tokens its `GetTrip` calls carry.
///
/// Fleet Engine wants a JWT per trip, minted by your backend with the consumer role and the
/// trip's ID. The service asks the provider once per trip and caches the token per trip ID
/// until shortly before it expires (``TripService/Options/tokenRefreshMargin``); concurrent
/// requests for the same trip share one call, and after the server answers UNAUTHENTICATED
/// the cached token is dropped and the provider asked again. A token returned without
/// ``AccessToken/expiresAt`` that is a JWT (three base64url parts, the middle one a JSON object
/// with a numeric `exp`) is cached until its `exp` as if it had said so; a malformed one is
/// simply a token without a known expiry.
///
/// The method may be called from any task, for several trips at once. An error it throws is
/// reported to subscribers as an ``RPCError`` with code UNAUTHENTICATED (the error itself as
/// its `cause`), unless it throws an ``RPCError``, which is reported as it is.
///
/// Built in: ``FixedAccessTokenProvider``, ``CommandAccessTokenProvider``,
/// ``HTTPAccessTokenProvider``, ``ServiceAccountTokenProvider``.
public protocol AccessTokenProvider: Sendable {
  /// A token for the trip in `context`.
  func accessToken(for context: AuthorizationContext) async throws -> AccessToken
}
