import FleetConsumer
import FleetSimulator
import Foundation
import Testing

/// A following model reuses its last poll's token without asking the token cache each time;
/// this holds it to what the cache would hand out: a token is refetched once it is within
/// the refresh margin of its expiry, not kept for the model's life.
@Suite("Tokens reused while following")
struct TokenReuseWhileFollowingTests {
  /// Tokens that live one second each, numbered in the order they are fetched.
  final class ShortLivedTokens: AccessTokenProvider {
    private let fetches = FleetSyncCounter()

    var fetchCount: Int { fetches.value }

    func accessToken(for context: AuthorizationContext) async throws -> AccessToken {
      let number = fetches.increment()
      return AccessToken("short-\(number)", expiresAt: Date().addingTimeInterval(1))
    }
  }

  @Test("a token near its expiry is fetched again while the model polls every 100 ms")
  func expiringTokenRefetched() async throws {
    var simulatorOptions = SimulatorOptions()
    // 15 simulated minutes in about 4 s.
    simulatorOptions.timeScale = 240
    let simulator = try await FleetSimulator.start(
      host: "127.0.0.1", port: 0, options: simulatorOptions)
    let name = try simulator.createDemoTrip()
    let tokens = ShortLivedTokens()
    var options = TripService.Options()
    options.pollInterval = .milliseconds(100)
    let service = try TripService(
      configuration: .init(
        endpoint: try .init(simulator.endpoint), transportSecurity: .plaintext,
        providerID: "demo-provider", accessTokenProvider: tokens, options: options))
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    let started = Date()
    model.register(subscriber)
    let events = try await subscriber.wait("\(name) to end", timeout: .seconds(60)) {
      $0.contains(.stateChanged(.inactive))
    }
    let followed = Date().timeIntervalSince(started)
    service.shutdown()
    await simulator.shutdown(gracePeriod: .seconds(1))

    #expect(events.contains(.tripStatus(.complete)))
    #expect(!events.contains { $0.error != nil })
    // Each token may be handed out for half its life (the margin is at most half of it):
    // about two fetches a second. One fetch would mean the first token was kept.
    #expect(followed > 2, "the trip ended too soon to see a token expire")
    #expect(
      tokens.fetchCount >= Int(followed), "\(tokens.fetchCount) fetches in \(followed) s")
  }
}
