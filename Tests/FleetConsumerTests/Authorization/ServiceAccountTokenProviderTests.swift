import Foundation
import PeerSupport
import Testing

@testable import FleetConsumer

/// `ServiceAccountTokenProvider` on its own: the JWT it writes, byte for byte; its lifetime
/// rule; every kind of unusable key; and its tokens checked by an independent implementation
/// (PyPI `cryptography` in `Tests/Python/consumer_jwt.py`) with the key's public half.
@Suite("Service-account tokens minted in process")
struct ServiceAccountTokenProviderTests {
  /// The header and payload of a compact JWT, decoded, and its signature's bytes.
  private func parts(_ token: String) throws -> (
    header: String, claims: [String: Any], signature: Data
  ) {
    let segments = token.split(separator: ".", omittingEmptySubsequences: false)
    try #require(segments.count == 3)
    let header = try #require(JSONWebToken.decodeBase64URL(segments[0]))
    let payload = try #require(JSONWebToken.decodeBase64URL(segments[1]))
    let signature = try #require(JSONWebToken.decodeBase64URL(segments[2]))
    let claims = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
    return (String(decoding: header, as: UTF8.self), claims, signature)
  }

  @Test("the header is exactly alg, typ, kid and the claims are the consumer token's")
  func headerAndClaims() async throws {
    let fixture = try await ServiceAccountFixture.shared
    let provider = try ServiceAccountTokenProvider(keyFile: fixture.keyFile)
    #expect(provider.clientEmail == fixture.clientEmail)
    #expect(provider.privateKeyID == fixture.privateKeyID)
    let issued = Date(timeIntervalSince1970: 1_900_000_000.75)
    let token = try provider.token(forTripID: "trip-7", issuedAt: issued)
    let (header, claims, signature) = try parts(token.token)
    #expect(header == #"{"alg":"RS256","typ":"JWT","kid":"\#(fixture.privateKeyID)"}"#)
    #expect(claims["iss"] as? String == fixture.clientEmail)
    #expect(claims["sub"] as? String == fixture.clientEmail)
    #expect(claims["aud"] as? String == "https://fleetengine.googleapis.com/")
    #expect(claims["iat"] as? Int == 1_900_000_000)
    #expect(claims["exp"] as? Int == 1_900_003_600)
    #expect(claims["authorization"] as? [String: String] == ["tripid": "trip-7"])
    #expect(Set(claims.keys) == ["iss", "sub", "aud", "iat", "exp", "authorization"])
    #expect(signature.count == 256, "a 2048-bit RSA signature")
    #expect(token.expiresAt == Date(timeIntervalSince1970: 1_900_003_600))
    #expect(!token.token.contains("="), "base64url without padding")
    #expect(!token.description.contains(token.token.prefix(20)))
  }

  @Test("a trip ID is written as a JSON string, escaped where JSON needs it")
  func escapedTripID() async throws {
    let provider = try ServiceAccountTokenProvider(
      keyFile: try await ServiceAccountFixture.shared.keyFile)
    let odd = "t\"1\\2\n\u{1}é"
    let (_, claims, _) = try parts(try provider.token(forTripID: odd, issuedAt: Date()).token)
    #expect(claims["authorization"] as? [String: String] == ["tripid": odd])
  }

  @Test(
    "the lifetime is 1 to 3600 s, in whole seconds; exp = iat + lifetime",
    arguments: [
      (Duration.seconds(1), 1), (.seconds(3600), 3600), (.milliseconds(4700), 4),
      (.seconds(90), 90),
    ] as [(Duration, Int)])
  func lifetime(lifetime: Duration, seconds: Int) async throws {
    let provider = try ServiceAccountTokenProvider(
      keyFile: try await ServiceAccountFixture.shared.keyFile, lifetime: lifetime)
    #expect(provider.lifetime == .seconds(seconds))
    let (_, claims, _) = try parts(
      try provider.token(forTripID: "t", issuedAt: Date(timeIntervalSince1970: 1_000)).token)
    #expect(claims["exp"] as? Int == 1_000 + seconds)
  }

  @Test(
    "a lifetime outside 1 to 3600 s is refused at init",
    arguments: [Duration.zero, .milliseconds(999), .seconds(3601), .seconds(-5), .seconds(86_400)])
  func badLifetime(lifetime: Duration) async throws {
    let keyFile = try await ServiceAccountFixture.shared.keyFile
    let error = #expect(throws: AccessTokenProviderError.self) {
      try ServiceAccountTokenProvider(keyFile: keyFile, lifetime: lifetime)
    }
    #expect(error?.message.contains("between 1 and 3600 seconds") == true)
  }

  @Test("by default a token is valid an hour and issued now")
  func defaults() async throws {
    let provider = try ServiceAccountTokenProvider(
      keyFile: try await ServiceAccountFixture.shared.keyFile)
    #expect(provider.lifetime == .seconds(3600))
    let context = AuthorizationContext(tripName: try TripName("providers/p/trips/trip-9"))
    let before = Date().timeIntervalSince1970.rounded(.down)
    let token = try await provider.accessToken(for: context)
    let after = Date().timeIntervalSince1970
    let (_, claims, _) = try parts(token.token)
    let iat = try #require(claims["iat"] as? Int)
    #expect(Double(iat) >= before && Double(iat) <= after)
    #expect(claims["exp"] as? Int == iat + 3600)
    #expect(claims["authorization"] as? [String: String] == ["tripid": "trip-9"])
  }

  @Test("init from the JSON data is the same as from the file")
  func fromData() async throws {
    let fixture = try await ServiceAccountFixture.shared
    let data = try Data(contentsOf: URL(fileURLWithPath: fixture.keyFile))
    let provider = try ServiceAccountTokenProvider(keyJSON: data, lifetime: .seconds(60))
    let issued = Date(timeIntervalSince1970: 1_800_000_000)
    let fromFile = try ServiceAccountTokenProvider(keyFile: fixture.keyFile, lifetime: .seconds(60))
    // RSASSA-PKCS1-v1_5 is deterministic: the same key and input give the same token.
    #expect(
      try provider.token(forTripID: "a", issuedAt: issued)
        == fromFile.token(forTripID: "a", issuedAt: issued))
  }

  /// A broken key file: what it holds and what the error must say.
  struct BrokenKey: Sendable, CustomTestStringConvertible {
    var name: String
    var contents: @Sendable (ServiceAccountFixture) throws -> Data
    var problem: String
    var testDescription: String { name }
  }

  static let brokenKeys: [BrokenKey] = [
    BrokenKey(
      name: "not JSON", contents: { _ in Data("client_email: x".utf8) }, problem: "is not JSON"),
    BrokenKey(name: "empty", contents: { _ in Data() }, problem: "is not JSON"),
    BrokenKey(
      name: "a JSON array", contents: { _ in Data("[1, 2]".utf8) },
      problem: "is JSON but not an object"),
    BrokenKey(
      name: "no client_email", contents: { try changed($0, removing: "client_email") },
      problem: "has no \"client_email\""),
    BrokenKey(
      name: "no private_key_id", contents: { try changed($0, removing: "private_key_id") },
      problem: "has no \"private_key_id\""),
    BrokenKey(
      name: "no private_key", contents: { try changed($0, removing: "private_key") },
      problem: "has no \"private_key\""),
    BrokenKey(
      name: "a number as client_email", contents: { try changed($0, ["client_email": 42]) },
      problem: "has no \"client_email\""),
    BrokenKey(
      name: "another type of credentials",
      contents: { try changed($0, ["type": "authorized_user"]) },
      problem: "is not a service-account key"),
    BrokenKey(
      name: "a private_key that is not PEM",
      contents: { try changed($0, ["private_key": "-----BEGIN PRIVATE KEY-----\nnot base64!\n"]) },
      problem: "not a PEM private key"),
    BrokenKey(
      name: "a public key as private_key",
      contents: { try changed($0, ["private_key": try text($0.publicKey)]) },
      problem: "not a PEM private key"),
    BrokenKey(
      name: "an encrypted private_key",
      contents: { try changed($0, ["private_key": try text($0.encryptedPrivateKey)]) },
      problem: "not a PEM private key"),
    BrokenKey(
      name: "an EC private_key",
      contents: { try changed($0, ["private_key": try text($0.ecPrivateKey)]) },
      problem: "not an RSA key"),
  ]

  @Test(
    "a key file that is not a usable service-account key is a clear error at init",
    arguments: brokenKeys)
  func brokenKey(key: BrokenKey) async throws {
    let fixture = try await ServiceAccountFixture.shared
    let path = try fixture.write(try key.contents(fixture), named: "key.json")
    let error = #expect(throws: AccessTokenProviderError.self) {
      try ServiceAccountTokenProvider(keyFile: path)
    }
    let message = error?.message ?? ""
    #expect(message.contains(key.problem), "\(message)")
    #expect(message.contains(path), "the file is named: \(message)")
    #expect(!message.contains("MII"), "the key is never quoted: \(message)")
    // The same bytes given as data fail the same way.
    #expect(throws: AccessTokenProviderError.self) {
      try ServiceAccountTokenProvider(keyJSON: try key.contents(fixture))
    }
  }

  @Test("a key file that cannot be read is a clear error at init")
  func unreadable() async throws {
    let fixture = try await ServiceAccountFixture.shared
    for path in [
      fixture.directory.appendingPathComponent("missing.json").path, fixture.directory.path,
    ] {
      let error = #expect(throws: AccessTokenProviderError.self) {
        try ServiceAccountTokenProvider(keyFile: path)
      }
      #expect(error?.message.contains("cannot read the service-account key file \(path)") == true)
    }
  }

  @Test("many trips at once each get their own token")
  func concurrent() async throws {
    let provider = try ServiceAccountTokenProvider(
      keyFile: try await ServiceAccountFixture.shared.keyFile)
    let tokens = try await withThrowingTaskGroup(of: (String, String).self) { group in
      for index in 0..<64 {
        let context = AuthorizationContext(tripName: try TripName("providers/p/trips/t\(index)"))
        group.addTask { (context.tripID, try await provider.accessToken(for: context).token) }
      }
      return try await group.reduce(into: [String: String]()) { $0[$1.0] = $1.1 }
    }
    #expect(Set(tokens.values).count == 64)
    for (tripID, token) in tokens {
      let (_, claims, _) = try parts(token)
      #expect(claims["authorization"] as? [String: String] == ["tripid": tripID])
    }
  }

  @Test("an independent RS256 implementation verifies every token, per trip, with the public key")
  func independentlyVerified() async throws {
    let fixture = try await ServiceAccountFixture.shared
    let provider = try ServiceAccountTokenProvider(keyFile: fixture.keyFile)
    let trips = ["trip-a-\(UUID().uuidString.prefix(6))", "trip-b-\(UUID().uuidString.prefix(6))"]
    var tokens: [(tripID: String, token: String)] = []
    for trip in trips {
      let context = AuthorizationContext(tripName: try TripName(providerID: "p", tripID: trip))
      tokens.append((trip, try await provider.accessToken(for: context).token))
    }
    let result = try await fixture.verify(tokens)
    #expect(result.status == 0, "\(result.transcript)")
    try #require(result.verdicts.count == 2, "\(result.transcript)")
    for (verdict, (trip, _)) in zip(result.verdicts, tokens) {
      #expect(verdict["ok"] as? Bool == true, "\(result.transcript)")
      let claims = try #require(verdict["claims"] as? [String: Any])
      #expect((claims["authorization"] as? [String: String])?["tripid"] == trip)
    }

    // The checker is not a rubber stamp: another trip's token, a changed payload and a
    // changed signature are each refused.
    let (first, second) = (tokens[0], tokens[1])
    let segments = first.token.split(separator: ".").map(String.init)
    let otherPayload = second.token.split(separator: ".")[1]
    let forged = [segments[0], String(otherPayload), segments[2]].joined(separator: ".")
    // The first character: the last one's low bits are padding a decoder may ignore.
    let flipped = segments[2].first == "A" ? "B" : "A"
    let badSignature = segments[0] + "." + segments[1] + "." + flipped + segments[2].dropFirst()
    let refused = try await fixture.verify([
      (second.tripID, first.token), (second.tripID, forged), (first.tripID, badSignature),
    ])
    #expect(refused.status == 1, "\(refused.transcript)")
    let reasons = refused.verdicts.map { $0["reason"] as? String ?? "accepted" }
    #expect(reasons.count == 3, "\(refused.transcript)")
    #expect(reasons.first?.contains("authorization is") == true, "\(reasons)")
    #expect(
      reasons.dropFirst().allSatisfy { $0.contains("signature does not verify") }, "\(reasons)")
  }
}

/// The key file's object with `changes` applied and `removing` left out, as JSON.
private func changed(
  _ fixture: ServiceAccountFixture, _ changes: [String: Any] = [:], removing: String? = nil
) throws -> Data {
  var object = try fixture.keyObject()
  for (key, value) in changes { object[key] = value }
  if let removing { object[removing] = nil }
  return try JSONSerialization.data(withJSONObject: object)
}

private func text(_ path: String) throws -> String {
  try String(contentsOfFile: path, encoding: .utf8)
}
