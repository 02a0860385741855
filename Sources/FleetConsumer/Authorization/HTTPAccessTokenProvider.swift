internal import Foundation

#if canImport(FoundationNetworking)
  internal import FoundationNetworking
#endif

/// A provider that GETs each token from your backend, as the Consumer SDK's sample provider
/// does: the response is a JSON object with the token and its expiration under configurable
/// keys.
///
/// The expiration may instead be relative, `"expiresInSeconds": 3600` (seconds from when the
/// response is read); with both, the earlier counts. A response with neither gives a JWT its
/// own `exp` claim as expiry, and any other token none (it is then used until the server
/// answers UNAUTHENTICATED).
///
/// `{tripID}` in the URL is replaced by the trip's ID (percent-encoded), so one endpoint can
/// serve every trip: `https://backend.example.com/token/consumer/{tripID}`. `http` and `https`
/// URLs work (through Foundation's `URLSession`); a non-2xx status, a timeout or a body
/// without the token fails with ``AccessTokenProviderError`` naming the URL's host and the
/// status, never the body.
public struct HTTPAccessTokenProvider: AccessTokenProvider {
  /// How the expiration value counts.
  public enum ExpirationUnit: Sendable, Hashable {
    /// Seconds since 1970 (`"expiresAt": 1767225600`).
    case unixSeconds
    /// Milliseconds since 1970 (`"expiration_timestamp_ms": 1767225600000`).
    case unixMilliseconds
  }

  /// The endpoint; `{tripID}` is replaced by the trip's ID.
  public var url: String
  /// The key of the token in the response. Default `token`.
  public var tokenKey: String
  /// The key of its expiration. Default `expiresAt`.
  public var expirationKey: String
  /// How the expiration counts. Default seconds.
  public var expirationUnit: ExpirationUnit
  /// Extra request headers (an API key for your backend, say).
  public var headers: [String: String]
  /// How long a request may take.
  public var timeout: Duration

  /// GETs tokens from `url` and reads them as the other parameters say.
  public init(
    url: String, tokenKey: String = "token", expirationKey: String = "expiresAt",
    expirationUnit: ExpirationUnit = .unixSeconds, headers: [String: String] = [:],
    timeout: Duration = .seconds(30)
  ) {
    self.url = url
    self.tokenKey = tokenKey
    self.expirationKey = expirationKey
    self.expirationUnit = expirationUnit
    self.headers = headers
    self.timeout = timeout
  }

  /// GETs the token for `context`'s trip.
  public func accessToken(for context: AuthorizationContext) async throws -> AccessToken {
    let tripID =
      context.tripID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)
      ?? context.tripID
    let text = url.replacingOccurrences(of: "{tripID}", with: tripID)
    guard let endpoint = URL(string: text), let scheme = endpoint.scheme?.lowercased(),
      scheme == "http" || scheme == "https", let host = endpoint.host
    else {
      throw AccessTokenProviderError("the token URL \"\(url)\" is not an http(s) URL")
    }
    var request = URLRequest(url: endpoint, timeoutInterval: timeout.seconds)
    request.httpMethod = "GET"
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let source = "the token endpoint at \(host)"
    let data: Data
    let response: URLResponse
    do {
      (data, response) = try await Self.session.data(for: request)
    } catch {
      throw AccessTokenProviderError(
        "\(source) could not be reached: \(error.localizedDescription)")
    }
    if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
      throw AccessTokenProviderError("\(source) answered HTTP \(http.statusCode)")
    }
    let unit: TokenResponse.ExpirationUnit =
      switch expirationUnit {
      case .unixSeconds: .unixSeconds
      case .unixMilliseconds: .unixMilliseconds
      }
    return try TokenResponse.parse(
      data, tokenKey: tokenKey, expirationKey: expirationKey, unit: unit, source: source)
  }

  // No cookies, no cache: a token response is for one trip, one time.
  private static let session = URLSession(configuration: .ephemeral)
}
