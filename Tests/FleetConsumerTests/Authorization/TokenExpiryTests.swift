import Foundation
import Testing

@testable import FleetConsumer

/// Where a token's expiry comes from: `expiresAt`, `expiresInSeconds`, or the JWT's own
/// `exp` when neither is stated — in the token JSON, the fixed provider and the cache.
@Suite("Token expiry: expiresAt, expiresInSeconds, a JWT's exp")
struct TokenExpiryTests {
  /// A JWT-shaped token whose payload is `payload` (not signed: nothing here checks it).
  static func jwt(_ payload: String, header: String = #"{"alg":"RS256","typ":"JWT"}"#) -> String {
    JSONWebToken.base64URL(Array(header.utf8)) + "."
      + JSONWebToken.base64URL(Array(payload.utf8)) + ".c2lnbmF0dXJl"
  }

  private let now = Date(timeIntervalSince1970: 1_800_000_000)

  private func parse(_ json: String) throws(AccessTokenProviderError) -> AccessToken {
    try TokenResponse.parse(
      Data(json.utf8), tokenKey: "token", expirationKey: "expiresAt", unit: .unixSeconds,
      source: "the test", now: now)
  }

  @Test("expiresInSeconds counts from when the response is read")
  func relative() throws {
    #expect(
      try parse(#"{"token": "t", "expiresInSeconds": 120}"#)
        == AccessToken("t", expiresAt: now + 120))
    #expect(
      try parse(#"{"token": "t", "expiresInSeconds": 0.5, "expiresAt": null}"#)
        == AccessToken("t", expiresAt: now + 0.5))
  }

  @Test("with expiresAt and expiresInSeconds both, the earlier counts")
  func both() throws {
    #expect(
      try parse(#"{"token": "t", "expiresAt": 1800000060, "expiresInSeconds": 120}"#).expiresAt
        == now + 60)
    #expect(
      try parse(#"{"token": "t", "expiresAt": 1800000600, "expiresInSeconds": 120}"#).expiresAt
        == now + 120)
  }

  @Test(
    "an expiresInSeconds that is not a number is an error that never quotes the token",
    arguments: [#""soon""#, "true", "false", "[1]", "{}"])
  func badRelative(value: String) {
    let error = #expect(throws: AccessTokenProviderError.self) {
      try parse(#"{"token": "secret-token", "expiresInSeconds": \#(value)}"#)
    }
    #expect(error?.message.contains("\"expiresInSeconds\" that is not a number of seconds") == true)
    #expect(error?.message.contains("secret-token") == false)
  }

  @Test("a stated expiry wins over the JWT's exp; without one the JWT's exp is used")
  func jwtExpiry() throws {
    let token = Self.jwt(#"{"sub":"x","exp":1800000900}"#)
    #expect(try parse(#"{"token": "\#(token)"}"#).expiresAt == now + 900)
    #expect(try parse(#"{"token": "\#(token)", "expiresAt": null}"#).expiresAt == now + 900)
    #expect(try parse(#"{"token": "\#(token)", "expiresAt": 1800000100}"#).expiresAt == now + 100)
    #expect(try parse(#"{"token": "\#(token)", "expiresInSeconds": 30}"#).expiresAt == now + 30)
    #expect(try parse(#"{"token": "opaque"}"#).expiresAt == nil)
  }

  @Test(
    "a token that only looks like a JWT simply has no expiry",
    arguments: [
      "a.b.c", "..", "a..c", ".b.", "eyJ.eyJ.sig", "x.y", "a.b.c.d",
      jwt(#"{"exp":1800000900}"#) + ".extra",
      jwt(#"{"exp":"1800000900"}"#), jwt(#"{"exp":true}"#), jwt(#"{"exp":null}"#),
      jwt(#"{"exp":[1]}"#), jwt(#"{"exp":1e999}"#), jwt(#"{"iat":1}"#), jwt("[1800000900]"),
      jwt("1800000900"), jwt("not json"), jwt(""), jwt(#"{"exp":1800000900"#),
      "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjE4MDAwMDA5MDB9=.sig",  // padded payload
      "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjE4MDAwMDA5MDB9+.sig",  // not base64url
      "eyJhbGciOiJIUzI1NiJ9.e.sig",  // a length no encoding has
      "é.é.é", String(repeating: ".", count: 10_000),
    ])
  func notAJWT(token: String) throws {
    #expect(JSONWebToken.expiry(of: token) == nil)
    #expect(AccessToken(token).withJWTExpiry() == AccessToken(token))
    let json = try JSONSerialization.data(withJSONObject: ["token": token])
    let parsed = try TokenResponse.parse(
      json, tokenKey: "token", expirationKey: "expiresAt", unit: .unixSeconds, source: "test")
    #expect(parsed.expiresAt == nil)
  }

  @Test("exp may be fractional, and the header is not needed to read it")
  func fractional() {
    #expect(
      JSONWebToken.expiry(of: Self.jwt(#"{"exp":1800000900.5}"#))
        == Date(timeIntervalSince1970: 1_800_000_900.5))
    #expect(
      JSONWebToken.expiry(of: Self.jwt(#"{"exp":1800000900}"#, header: "garbage"))
        == now + 900)
  }

  @Test("a fixed JWT without an expiry gets its exp; a stated expiry is kept")
  func fixedProvider() async throws {
    let context = AuthorizationContext(tripName: try TripName("providers/p/trips/t"))
    let token = Self.jwt(#"{"exp":1800000900}"#)
    #expect(
      try await FixedAccessTokenProvider(AccessToken(token)).accessToken(for: context)
        == AccessToken(token, expiresAt: now + 900))
    #expect(
      try await FixedAccessTokenProvider(AccessToken(token, expiresAt: now)).accessToken(
        for: context) == AccessToken(token, expiresAt: now))
    #expect(
      try await FixedAccessTokenProvider(AccessToken("opaque")).accessToken(for: context)
        == AccessToken("opaque"))
  }

  @Test("the cache refreshes any provider's JWT before its exp, though no expiry was stated")
  func cacheUsesJWTExpiry() async throws {
    let clock = TokenCacheTests.ManualClock()
    /// Mints `{"exp": now + 600, "n": <call>}` and states no expiry.
    final class JWTProvider: AccessTokenProvider {
      let clock: TokenCacheTests.ManualClock
      let calls = FleetSyncCounter()
      init(clock: TokenCacheTests.ManualClock) { self.clock = clock }
      func accessToken(for context: AuthorizationContext) async throws -> AccessToken {
        let call = calls.increment()
        let exp = Int(clock.now.timeIntervalSince1970) + 600
        return AccessToken(TokenExpiryTests.jwt(#"{"exp":\#(exp),"n":\#(call)}"#))
      }
    }
    let provider = JWTProvider(clock: clock)
    let cache = TokenCache(provider: provider, refreshMargin: .seconds(60), now: { clock.now })
    let context = AuthorizationContext(tripName: try TripName("providers/p/trips/t"))
    let first = try await cache.token(for: context)
    #expect(first.expiresAt == clock.now + 600)
    clock.advance(600 - 61)
    #expect(try await cache.token(for: context) == first)
    clock.advance(2)  // inside the 60 s margin before exp
    #expect(try await cache.token(for: context) != first)
    #expect(provider.calls.value == 2)
  }

  @Test("the command provider reads expiresInSeconds and a JWT's exp too")
  func commandProvider() async throws {
    let context = AuthorizationContext(tripName: try TripName("providers/p/trips/t"))
    let relative = CommandAccessTokenProvider(
      command: #"echo '{"token": "t", "expiresInSeconds": 300}'"#)
    let before = Date()
    let token = try await relative.accessToken(for: context)
    let expiry = try #require(token.expiresAt)
    #expect(expiry >= before + 300 && expiry <= Date() + 300)

    let jwt = Self.jwt(#"{"exp":1800000900}"#)
    let fromJWT = CommandAccessTokenProvider(command: #"echo '{"token": "\#(jwt)"}'"#)
    #expect(try await fromJWT.accessToken(for: context).expiresAt == now + 900)
  }
}
