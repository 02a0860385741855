import Foundation
import PeerSupport
import Testing

@testable import FleetConsumer

/// Tokens minted by `ServiceAccountTokenProvider` in real use: followers against the fake
/// Fleet Engine started with `--verify-jwt-public-key`, which checks every call's bearer JWT
/// with the key's public half (PyPI `cryptography`) for the trip it asks for, and refuses
/// any other token with UNAUTHENTICATED.
@Suite("Minted tokens against the fake Fleet Engine")
struct ServiceAccountFollowTests {
  /// Runs `body` with a fake Fleet Engine that verifies JWTs against the fixture's key.
  private func withVerifyingEngine(
    _ body: (FakeFleetEngine, ServiceAccountFixture) async throws -> Void
  ) async throws {
    let fixture = try await ServiceAccountFixture.shared
    let engine = try await FakeFleetEngine.start(jwtPublicKey: fixture.publicKey)
    do {
      try await body(engine, fixture)
    } catch {
      await engine.stop()
      throw error
    }
    await engine.stop()
  }

  /// `fleet-follow --endpoint … --plaintext --trip-name <name> <token flags> --json …`.
  private func follow(
    _ engine: FakeFleetEngine, _ name: String, _ tokenFlags: [String], _ extra: [String] = []
  ) async throws -> FleetFollowProcess.Result {
    try await FleetFollowProcess.run(
      ["--endpoint", "127.0.0.1:\(engine.server.port)", "--plaintext", "--trip-name", name]
        + tokenFlags + ["--poll-interval", "0.1", "--json"] + extra)
  }

  /// The claims of a compact JWT.
  private func claims(_ token: String) throws -> [String: Any] {
    let payload = try #require(token.split(separator: ".").dropFirst().first)
    let data = try #require(JSONWebToken.decodeBase64URL(payload))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
  }

  @Test("fleet-follow --service-account-key follows a trip to COMPLETE; every call's JWT verifies")
  func fleetFollow() async throws {
    try await withVerifyingEngine { engine, fixture in
      let name = FakeScript.tripName()
      let tripID = try TripName(name).tripID
      try engine.add([name: Lifecycle.steps(tripID: tripID)])
      let result = try await follow(engine, name, ["--service-account-key", fixture.keyFile])
      #expect(result.status == 0, "\(result)")
      let objects = try result.objects()
      #expect(objects.filter { $0["event"] as? String == "error" }.isEmpty, "\(result)")
      #expect(
        objects.compactMap {
          $0["event"] as? String == "tripStatus" ? $0["status"] as? String : nil
        }
          == ["NEW", "ENROUTE_TO_PICKUP", "ARRIVED_AT_PICKUP", "ENROUTE_TO_DROPOFF", "COMPLETE"])

      let requests = try await engine.waitForRequests(6, for: name)
      #expect(requests.count == 6, "no GetTrip after COMPLETE")
      #expect(requests.map(\.answer) == Array(repeating: "OK", count: 6))
      #expect(requests.map(\.jwt) == Array(repeating: "ok", count: 6), "\(requests)")
      // One token for the trip, valid an hour, reused by every poll.
      let bearers = Set(requests.compactMap(\.authorization))
      let bearer = try #require(bearers.first)
      #expect(bearers.count == 1)
      let token = String(bearer.dropFirst("Bearer ".count))
      let verdicts = try await fixture.verify([(tripID, token)])
      #expect(verdicts.status == 0, "\(verdicts.transcript)")
      let claims = try claims(token)
      #expect((claims["exp"] as? Int).map { $0 - (claims["iat"] as? Int ?? 0) } == 3600)
    }
  }

  @Test("the server refuses a minted token for another trip: UNAUTHENTICATED, saying why")
  func anotherTripsToken() async throws {
    try await withVerifyingEngine { engine, fixture in
      let name = FakeScript.tripName()
      try engine.add([name: [.trip(["tripStatus": "NEW"])]])
      let provider = try ServiceAccountTokenProvider(keyFile: fixture.keyFile)
      let other = AuthorizationContext(tripName: try TripName(FakeScript.tripName("other")))
      let token = try await provider.accessToken(for: other).token
      let result = try await follow(engine, name, ["--token", token], ["--max-seconds", "1.5"])
      #expect(result.status == 0, "\(result)")
      let errors = try result.objects().filter { $0["event"] as? String == "error" }
      #expect(!errors.isEmpty, "\(result)")
      #expect(errors.allSatisfy { $0["status"] as? String == "UNAUTHENTICATED" })
      let message = errors.first?["message"] as? String ?? ""
      #expect(message.contains("not valid for this trip: authorization is"), "\(message)")
      let requests = engine.requests(for: name)
      #expect(!requests.isEmpty)
      #expect(requests.allSatisfy { $0.answer == "UNAUTHENTICATED" })
      #expect(requests.allSatisfy { $0.jwt?.hasPrefix("authorization_is") == true }, "\(requests)")
    }
  }

  @Test(
    "with a few seconds' lifetime the follower presents a fresh token before exp, every call valid"
  )
  func refreshBeforeExpiry() async throws {
    try await withVerifyingEngine { engine, fixture in
      let name = FakeScript.tripName()
      try engine.add([name: [.trip(["tripStatus": "NEW"])]])  // repeated on every poll
      let provider = try ServiceAccountTokenProvider(
        keyFile: fixture.keyFile, lifetime: .seconds(4))
      let service = try FleetTest.service(engine, tokens: provider)
      defer { service.shutdown() }
      let model = try service.tripModel(forTripName: name)
      let subscriber = RecordingSubscriber()
      model.register(subscriber)

      // Polls every 100 ms until three tokens were presented: two refreshes.
      let deadline = ContinuousClock.now + .seconds(30)
      var requests: [GetTripRecord] = []
      while Set(requests.compactMap(\.authorization)).count < 3 {
        let remaining = deadline - ContinuousClock.now
        try #require(remaining > .zero, "three tokens within 30 s; got \(requests)")
        requests = try await engine.waitForRequests(
          requests.count + 1, for: name, timeout: remaining)
      }
      model.unregisterSubscriber(subscriber)
      await model.loopEnded()
      requests = engine.requests(for: name)

      #expect(subscriber.events.compactMap(\.error).isEmpty, "\(subscriber.events)")
      #expect(requests.allSatisfy { $0.answer == "OK" && $0.jwt == "ok" }, "\(requests)")
      // In the order presented: each new token was minted before the one it replaced
      // expired, and was minted for this trip with the 4 s lifetime.
      var presented: [String] = []
      for bearer in requests.compactMap(\.authorization) where presented.last != bearer {
        presented.append(bearer)
      }
      #expect(presented.count == Set(presented).count, "a token never comes back")
      let tokens = presented.map { String($0.dropFirst("Bearer ".count)) }
      let all = try tokens.map(claims)
      for claims in all {
        #expect((claims["exp"] as? Int).map { $0 - (claims["iat"] as? Int ?? 0) } == 4)
        #expect((claims["authorization"] as? [String: String])?["tripid"] == model.tripName.tripID)
      }
      for (old, new) in zip(all, all.dropFirst()) {
        let (oldExp, newIat) = (old["exp"] as? Int ?? 0, new["iat"] as? Int ?? .max)
        #expect(newIat < oldExp, "refreshed before exp: iat \(newIat), previous exp \(oldExp)")
      }
      // The server's own check said "ok" for each call, at the time it was made; Python's
      // check now confirms the signature, header and claims of each token once more (the
      // earlier ones may have expired by now, which it reports as the only fault).
      let verdicts = try await fixture.verify(tokens.map { (model.tripName.tripID, $0) })
      for verdict in verdicts.verdicts where verdict["ok"] as? Bool != true {
        #expect((verdict["reason"] as? String)?.contains("expired") == true, "\(verdict)")
      }
    }
  }

  @Test(
    "a key file fleet-follow cannot use is a usage error (exit 2); nothing is sent",
    arguments: ["missing", "not JSON", "EC key"])
  func badKeyFile(kind: String) async throws {
    try await withVerifyingEngine { engine, fixture in
      let path: String
      let problem: String
      switch kind {
      case "missing":
        path = fixture.directory.appendingPathComponent("no-such-key.json").path
        problem = "cannot read the service-account key file \(path)"
      case "not JSON":
        path = try fixture.write(Data("{client_email".utf8), named: "key.json")
        problem = "is not JSON"
      default:
        var object = try fixture.keyObject()
        object["private_key"] = try String(contentsOfFile: fixture.ecPrivateKey, encoding: .utf8)
        path = try fixture.write(
          try JSONSerialization.data(withJSONObject: object), named: "key.json")
        problem = "is not an RSA key"
      }
      let name = FakeScript.tripName()
      try engine.add([name: [.trip(["tripStatus": "NEW"])]])
      let result = try await follow(engine, name, ["--service-account-key", path])
      #expect(result.status == 2, "\(result)")
      #expect(result.stdout.isEmpty, "\(result)")
      #expect(result.stderr.contains("--service-account-key: "), "\(result)")
      #expect(result.stderr.contains(problem), "\(result)")
      #expect(!result.stderr.contains("MII"), "the key is never printed")
      #expect(engine.requests(for: name).isEmpty)
    }
  }

  @Test("--service-account-key with another token source is a usage error naming all four")
  func exclusive() async throws {
    let fixture = try await ServiceAccountFixture.shared
    let result = try await FleetFollowProcess.run([
      "--endpoint", "127.0.0.1:9", "--plaintext", "--trip-name", "providers/p/trips/t",
      "--token", "t", "--service-account-key", fixture.keyFile, "--json",
    ])
    #expect(result.status == 2, "\(result)")
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr.contains(
        "give exactly one of --token, --token-command, --token-url, --service-account-key"),
      "\(result)")
  }
}
