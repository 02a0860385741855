internal import FleetSigning
internal import Foundation
public import FoundationEssentials

/// A provider that mints Fleet Engine consumer tokens in process, from a Google
/// service-account key: what your backend's token endpoint would do, without the endpoint.
///
/// The key is the JSON file Google Cloud gives out for a service account (`client_email`,
/// `private_key` as PEM, `private_key_id`); give the account the Fleet Engine Consumer User
/// role. Each token is a JWT signed RS256 with OpenSSL, with the header
/// `{"alg":"RS256","typ":"JWT","kid":<private_key_id>}` and the claims `iss` and `sub` (the
/// `client_email`), `aud` (`https://fleetengine.googleapis.com/`), `iat` (now, in whole
/// seconds), `exp` (`iat` plus ``lifetime``) and `authorization` (`{"tripid": <trip ID>}`),
/// all base64url without padding. The returned ``AccessToken`` expires at `exp`, so a
/// ``TripService`` caches it per trip and mints the next one before then.
///
/// A key that cannot be used — an unreadable file, JSON that is not a service-account key, a
/// `private_key` that is not an RSA private key in PEM — throws ``AccessTokenProviderError``
/// from the initialiser, never later; its messages never quote the key. Minting may be called
/// from any task, for many trips at once, and takes about a millisecond of CPU (one RSA
/// signature).
public struct ServiceAccountTokenProvider: AccessTokenProvider {
  /// The `aud` claim of every token: Fleet Engine.
  public static let audience = "https://fleetengine.googleapis.com/"
  /// The longest ``lifetime`` Fleet Engine accepts: an hour.
  public static let maximumLifetime: Duration = .seconds(3600)

  /// The service account's e-mail address, the tokens' `iss` and `sub`.
  public let clientEmail: String
  /// The key's ID, the tokens' `kid`.
  public let privateKeyID: String
  /// How long each token is valid (`exp` − `iat`), in whole seconds.
  public let lifetime: Duration

  private let lifetimeSeconds: Int64
  private let signingKey: RSASigningKey
  /// The encoded header, the same for every token.
  private let encodedHeader: String

  // Key files are a few KB; a path to something huge (or endless) is a mistake.
  private static let maximumKeyFileSize = 1 << 20

  /// Reads the service-account key file at `path`; tokens are valid for `lifetime`
  /// (1 s to 3600 s, default an hour; a fraction of a second is dropped).
  ///
  /// Throws ``AccessTokenProviderError`` when the file cannot be read or is not a usable key,
  /// or when `lifetime` is out of range.
  public init(keyFile path: String, lifetime: Duration = maximumLifetime)
    throws(AccessTokenProviderError)
  {
    let source = "the service-account key file \(path)"
    let data: Data
    do {
      let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
      defer { try? handle.close() }
      data = try handle.read(upToCount: Self.maximumKeyFileSize + 1) ?? Data()
    } catch {
      throw AccessTokenProviderError(
        "cannot read \(source): \((error as NSError).localizedDescription)")
    }
    guard data.count <= Self.maximumKeyFileSize else {
      throw AccessTokenProviderError("\(source) is larger than 1 MiB; it is not a key file")
    }
    try self.init(keyJSON: data, lifetime: lifetime, source: source)
  }

  /// Reads the service-account key from the JSON `keyJSON`, as in ``init(keyFile:lifetime:)``.
  public init(keyJSON: Data, lifetime: Duration = maximumLifetime)
    throws(AccessTokenProviderError)
  {
    try self.init(keyJSON: keyJSON, lifetime: lifetime, source: "the service-account key")
  }

  private init(keyJSON: Data, lifetime: Duration, source: String)
    throws(AccessTokenProviderError)
  {
    guard lifetime >= .seconds(1), lifetime <= Self.maximumLifetime else {
      throw AccessTokenProviderError(
        "a token lifetime of \(lifetime) is not between 1 and 3600 seconds, as Fleet Engine "
          + "requires")
    }
    let fields: [String: Any]
    do {
      guard let object = try JSONSerialization.jsonObject(with: keyJSON) as? [String: Any] else {
        throw AccessTokenProviderError("\(source) is JSON but not an object")
      }
      fields = object
    } catch let error as AccessTokenProviderError {
      throw error
    } catch {
      throw AccessTokenProviderError(
        "\(source) is not JSON (\(keyJSON.count) bytes); expected a Google service-account key")
    }
    if let type = fields["type"], type as? String != "service_account" {
      throw AccessTokenProviderError(
        "\(source) is not a service-account key (its \"type\" is not \"service_account\")")
    }
    func string(_ key: String) throws(AccessTokenProviderError) -> String {
      guard let value = fields[key] as? String, !value.isEmpty else {
        throw AccessTokenProviderError(
          "\(source) has no \"\(key)\" (a non-empty string); expected a Google "
            + "service-account key with client_email, private_key and private_key_id")
      }
      return value
    }
    clientEmail = try string("client_email")
    privateKeyID = try string("private_key_id")
    let pem = try string("private_key")
    do {
      signingKey = try RSASigningKey(pem: pem)
    } catch {
      throw AccessTokenProviderError("\(source): \(error.message)")
    }
    let seconds = lifetime.components.seconds
    lifetimeSeconds = seconds
    self.lifetime = .seconds(seconds)
    encodedHeader = JSONWebToken.base64URL(
      Array(
        (#"{"alg":"RS256","typ":"JWT","kid":"# + JSONWebToken.jsonString(privateKeyID) + "}")
          .utf8))
  }

  /// A new token for `context`'s trip, issued now. Throws ``AccessTokenProviderError`` only
  /// when OpenSSL cannot sign.
  public func accessToken(for context: AuthorizationContext) async throws -> AccessToken {
    try token(forTripID: context.tripID, issuedAt: Date())
  }

  /// The token for `tripID` issued at `issuedAt` (rounded down to a whole second).
  func token(forTripID tripID: String, issuedAt: Date) throws(AccessTokenProviderError)
    -> AccessToken
  {
    let issued = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
    let expires = issued + lifetimeSeconds
    let issuer = JSONWebToken.jsonString(clientEmail)
    let claims =
      #"{"iss":\#(issuer),"sub":\#(issuer),"aud":\#(JSONWebToken.jsonString(Self.audience)),"#
      + #""iat":\#(issued),"exp":\#(expires),"#
      + #""authorization":{"tripid":\#(JSONWebToken.jsonString(tripID))}}"#
    let signingInput = encodedHeader + "." + JSONWebToken.base64URL(Array(claims.utf8))
    let signature: [UInt8]
    do {
      signature = try signingKey.signRS256(Array(signingInput.utf8))
    } catch {
      throw AccessTokenProviderError(error.message)
    }
    return AccessToken(
      signingInput + "." + JSONWebToken.base64URL(signature),
      expiresAt: Date(timeIntervalSince1970: TimeInterval(expires)))
  }
}
