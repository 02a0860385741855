import FleetConsumer
import FleetSimulator
import Foundation
import Testing

/// A following model reuses its last poll's token without asking the token cache each time;
/// this holds it to what the cache would hand out: a token is refetched once it is within
/// the refresh margin of its expiry, not kept for the model's life. The simulator checks each
/// call's token expiry itself (``TokenPolicy/perTrip``), so a token kept too long is refused
/// however fast or slow the polls run.
@Suite("Tokens reused while following")
struct TokenReuseWhileFollowingTests {
  /// Tokens declared to live two seconds (so handed out for one), which the simulator
  /// refuses four seconds after they were fetched (`exp` rounds down: at least three). The
  /// two seconds between are for a poll that took its token just in time to reach the server.
  final class ShortLivedTokens: AccessTokenProvider {
    private let fetches = FleetSyncCounter()

    var fetchCount: Int { fetches.value }

    func accessToken(for context: AuthorizationContext) async throws -> AccessToken {
      fetches.increment()
      let now = Date()
      return AccessToken(
        SimulatorToken.jwt(tripID: nil, expiresAt: now.addingTimeInterval(4)),
        expiresAt: now.addingTimeInterval(2))
    }
  }

  @Test("a token near its expiry is fetched again while the model polls every 100 ms")
  func expiringTokenRefetched() async throws {
    var simulatorOptions = SimulatorOptions()
    // 15 simulated minutes in about 7.5 s: longer than a token is accepted.
    simulatorOptions.timeScale = 120
    simulatorOptions.tokenPolicy = .perTrip
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

    // A token kept past the simulator's expiry would have been refused (UNAUTHENTICATED).
    #expect(events.contains(.tripStatus(.complete)))
    #expect(!events.contains { $0.error != nil })
    #expect(followed > 4, "the trip ended before the first token stopped being accepted")
    #expect(tokens.fetchCount >= 2, "\(tokens.fetchCount) fetches in \(followed) s")
  }
}
