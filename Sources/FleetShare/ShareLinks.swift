internal import FleetSigning
internal import GRPCWire

/// Share-link tokens: a trip name and an expiry, sealed with a link secret so that a token
/// shows nothing of the trip and a changed or forged one opens to nothing.
///
/// A token is base64url (no padding) of: a version byte (1), a random 16-byte IV, the trip
/// name and expiry encrypted with AES-256-CTR, and an HMAC-SHA256 over the version, the IV,
/// the expiry and the trip name. Both keys are derived from the secret by HMAC-SHA256 with
/// fixed labels. A token is opened only when its HMAC verifies (compared in constant time);
/// only then is its expiry looked at, so a forged token cannot tell "expired" from
/// "unknown".
public struct ShareLinks: Sendable {
  private let encryptionKey: [UInt8]
  private let macKey: [UInt8]

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
  static let maximumTokenLength = 1_600
  private static let version: UInt8 = 1

  /// Links sealed with `secret` (any bytes; 32 random ones when not given, see
  /// ``randomSecret()``).
  public init(secret: [UInt8]) throws(Failure) {
    do {
      encryptionKey = try LinkSealing.hmacSHA256(key: secret, Array("fleet-share encryption".utf8))
      macKey = try LinkSealing.hmacSHA256(key: secret, Array("fleet-share authentication".utf8))
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
      let iv = try LinkSealing.randomBytes(16)
      let sealed = try LinkSealing.aes256CTR(key: encryptionKey, iv: iv, plain)
      let mac = try LinkSealing.hmacSHA256(key: macKey, [Self.version] + iv + plain)
      return Base64.encodeUnpadded([Self.version] + iv + sealed + mac, alphabet: .url)
    } catch {
      throw Failure(description: "cannot seal the link: \(error.message)")
    }
  }

  /// Opens `token` at `now` (Unix seconds).
  public func open(_ token: some StringProtocol, now: Int64) -> Opened {
    guard token.utf8.count <= Self.maximumTokenLength,
      let bytes = Base64.decode(token, alphabet: .url),
      bytes.count >= 1 + 16 + 8 + 32, bytes[0] == Self.version,
      // Only the one spelling `seal` makes: the last character of unpadded base64 carries
      // unused low bits, and a token differing there would otherwise open all the same.
      Base64.encodeUnpadded(bytes, alphabet: .url).utf8.elementsEqual(token.utf8)
    else { return .invalid }
    let iv = Array(bytes[1..<17])
    let sealed = Array(bytes[17..<(bytes.count - 32)])
    let mac = Array(bytes[(bytes.count - 32)...])
    guard let plain = try? LinkSealing.aes256CTR(key: encryptionKey, iv: iv, sealed),
      let expected = try? LinkSealing.hmacSHA256(key: macKey, [Self.version] + iv + plain),
      LinkSealing.constantTimeEqual(mac, expected)
    else { return .invalid }
    let expiresAt = plain.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    guard let tripName = String(validating: plain.dropFirst(8), as: UTF8.self) else {
      return .invalid
    }
    return now < expiresAt ? .valid(tripName: tripName, expiresAt: expiresAt) : .expired
  }

  /// The sealed content: the expiry (8 bytes, big-endian), then the trip name in UTF-8.
  private static func plaintext(_ tripName: String, _ expiresAt: Int64) -> [UInt8] {
    var bytes = (0..<8).map { UInt8(truncatingIfNeeded: expiresAt >> (56 - 8 * $0)) }
    bytes.append(contentsOf: tripName.utf8)
    return bytes
  }
}
