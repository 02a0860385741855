internal import FleetSigning
internal import GRPCWire
internal import FleetSync

/// Share-link tokens: a trip name and an expiry, sealed with a link secret so that a token
/// shows nothing of the trip and a changed or forged one opens to nothing.
///
/// A token is base64url (no padding) of: a version byte (2), the trip's 11-byte routing key,
/// a random 16-byte IV, the trip name and expiry encrypted with AES-256-CTR, and an
/// HMAC-SHA256 over the version, the routing key, the IV, the expiry and the trip name. The
/// keys are derived from the secret by HMAC-SHA256 with fixed labels. A token is opened only
/// when its HMAC verifies (compared in constant time); only then is its expiry looked at, so a
/// forged token cannot tell "expired" from "unknown".
///
/// The version byte and the routing key are 12 bytes, so a token's first 16 characters
/// (``routingPrefixLength``) are the same for every link of one trip and differ between trips:
/// a balancer hashing them sends everything about a trip to one instance. The routing key is
/// an HMAC of the trip name, so it shows nothing of the trip. Tokens of version 1 (no routing
/// key) still open; their first 16 characters hold part of a random IV.
public struct ShareLinks: Sendable {
  private let encryptionKey: [UInt8]
  private let macKey: [UInt8]
  private let routingMACKey: [UInt8]

  /// What ``open(_:now:)`` found.
  public enum Opened: Sendable, Hashable {
    /// A token this server made, for `tripName`, valid until `expiresAt` (Unix seconds).
    case valid(tripName: String, expiresAt: Int64)
    /// A token this server made whose expiry has passed: 410 Gone.
    case expired
    /// Anything else: tampered, forged, cut, made with another secret — 404 Not Found.
    case invalid
  }

  /// Why a token could not be made.
  public struct Failure: Error, Sendable, CustomStringConvertible {
    public let description: String
  }

  /// The longest token accepted: a trip name of up to about 1 KiB.
  static let maximumTokenLength = 1_620
  /// Tokens made now: with a routing key.
  private static let version: UInt8 = 2
  /// Tokens made before routing keys: still opened.
  private static let unroutedVersion: UInt8 = 1
  private static let routingKeyLength = 11
  /// How many leading characters of a token are the same for all links of one trip: the
  /// version byte and the routing key, 12 bytes, which base64 spells in 16 characters.
  public static let routingPrefixLength = 16

  /// Links sealed with `secret` (any bytes; 32 random ones when not given, see
  /// ``randomSecret()``).
  public init(secret: [UInt8]) throws(Failure) {
    do {
      encryptionKey = try LinkSealing.hmacSHA256(key: secret, Array("fleet-share encryption".utf8))
      macKey = try LinkSealing.hmacSHA256(key: secret, Array("fleet-share authentication".utf8))
      routingMACKey = try LinkSealing.hmacSHA256(key: secret, Array("fleet-share routing".utf8))
    } catch {
      throw Failure(description: "cannot derive the link keys: \(error.message)")
    }
  }

  /// 32 random bytes: the secret of a server whose links need not outlive it.
  public static func randomSecret() throws(Failure) -> [UInt8] {
    do {
      return try LinkSealing.randomBytes(32)
    } catch {
      throw Failure(description: "no random bytes: \(error.message)")
    }
  }

  /// A token for `tripName` valid until `expiresAt` (Unix seconds).
  public func token(for tripName: String, expiresAt: Int64) throws(Failure) -> String {
    let plain = Self.plaintext(tripName, expiresAt)
    guard plain.count <= 1_024 else { throw Failure(description: "the trip name is too long") }
    do {
      let header = [Self.version] + (try routingKey(tripName))
      let iv = try LinkSealing.randomBytes(16)
      let sealed = try LinkSealing.aes256CTR(key: encryptionKey, iv: iv, plain)
      let mac = try LinkSealing.hmacSHA256(key: macKey, header + iv + plain)
      return Base64.encodeUnpadded(header + iv + sealed + mac, alphabet: .url)
    } catch {
      throw Failure(description: "cannot seal the link: \(error.message)")
    }
  }

  /// The routing prefix every link of `tripName` starts with (``routingPrefixLength``
  /// characters): what a balancer hashes.
  public func routingPrefix(for tripName: String) throws(Failure) -> String {
    do {
      let header = [Self.version] + (try routingKey(tripName))
      return Base64.encodeUnpadded(header, alphabet: .url)
    } catch {
      throw Failure(description: "cannot derive the routing key: \(error.message)")
    }
  }

  /// Opens `token` at `now` (Unix seconds).
  public func open(_ token: some StringProtocol, now: Int64) -> Opened {
    guard token.utf8.count <= Self.maximumTokenLength,
      let bytes = Base64.decode(token, alphabet: .url), let version = bytes.first,
      // Only the one spelling `seal` makes: the last character of unpadded base64 carries
      // unused low bits, and a token differing there would otherwise open all the same.
      Base64.encodeUnpadded(bytes, alphabet: .url).utf8.elementsEqual(token.utf8)
    else { return .invalid }
    let headerLength: Int
    switch version {
    case Self.version: headerLength = 1 + Self.routingKeyLength
    case Self.unroutedVersion: headerLength = 1
    default: return .invalid
    }
    guard bytes.count >= headerLength + 16 + 8 + 32 else { return .invalid }
    let header = Array(bytes[..<headerLength])
    let iv = Array(bytes[headerLength..<(headerLength + 16)])
    let sealed = Array(bytes[(headerLength + 16)..<(bytes.count - 32)])
    let mac = Array(bytes[(bytes.count - 32)...])
    guard let plain = try? LinkSealing.aes256CTR(key: encryptionKey, iv: iv, sealed),
      let expected = try? LinkSealing.hmacSHA256(key: macKey, header + iv + plain),
      LinkSealing.constantTimeEqual(mac, expected)
    else { return .invalid }
    let expiresAt = plain.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    guard let tripName = String(validating: plain.dropFirst(8), as: UTF8.self) else {
      return .invalid
    }
    return now < expiresAt ? .valid(tripName: tripName, expiresAt: expiresAt) : .expired
  }

  /// The trip's routing key: the first bytes of an HMAC of its name under a key of its own.
  private func routingKey(_ tripName: String) throws(LinkSealing.Failure) -> [UInt8] {
    Array(
      try LinkSealing.hmacSHA256(key: routingMACKey, Array(tripName.utf8)).prefix(Self.routingKeyLength))
  }

  /// The sealed content: the expiry (8 bytes, big-endian), then the trip name in UTF-8.
  private static func plaintext(_ tripName: String, _ expiresAt: Int64) -> [UInt8] {
    var bytes = (0..<8).map { UInt8(truncatingIfNeeded: expiresAt >> (56 - 8 * $0)) }
    bytes.append(contentsOf: tripName.utf8)
    return bytes
  }
}
