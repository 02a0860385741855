import Foundation
import Testing

@testable import FleetConsumer

/// Settings shared by the tests that follow trips on the fake Fleet Engine.
enum FleetTest {
  static let provider = "fleet-test"

  /// Backoff for tests: fast, without jitter, so waits stay short and predictable.
  static let fastRetry = RetryPolicy(
    initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(400), jitter: 0)

  /// The core of a service that never connects (no model of it follows), shared by unit
  /// tests that need models but no server.
  static let offline = ServiceCore(
    configuration: .init(
      endpoint: .init(host: "127.0.0.1", port: 9), transportSecurity: .plaintext,
      providerID: "p", accessTokenProvider: FixedAccessTokenProvider(AccessToken("t"))))

  static func offlineCore() -> ServiceCore { offline }

  /// A service on `engine` that polls every 100 ms.
  static func service(
    _ engine: FakeFleetEngine,
    tokens: any AccessTokenProvider = FixedAccessTokenProvider(
      AccessToken("test-token")),
    pollInterval: Duration = .milliseconds(100), retry: RetryPolicy = fastRetry,
    configure: (inout TripService.Options) -> Void = { _ in }
  ) throws -> TripService {
    var options = TripService.Options()
    options.pollInterval = pollInterval
    options.retryPolicy = retry
    options.callTimeout = .seconds(5)
    configure(&options)
    return try TripService(
      configuration: .init(
        endpoint: engine.endpoint, transportSecurity: .plaintext, providerID: provider,
        accessTokenProvider: tokens, options: options))
  }
}

extension TripModel {
  /// Waits until the model has stopped following (after a terminal status, a stop, or once it
  /// noticed its subscribers are gone) and has no call in flight: from then on it sends
  /// nothing more. Records an issue after 10 s.
  func loopEnded() async {
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline {
      if !protected.withLock({ $0.follower.isFollowing }), await noCallInFlight { return }
      try? await Task.sleep(for: .milliseconds(5))
    }
    Issue.record("\(tripName) was still following 10 s later")
  }

  /// Whether the model has no call in flight, as its loop (which alone records the calls)
  /// sees it.
  var noCallInFlight: Bool {
    get async {
      await withCheckedContinuation { continuation in
        lane.loop.execute { continuation.resume(returning: self.onLoop.value.call == nil) }
      }
    }
  }
}
