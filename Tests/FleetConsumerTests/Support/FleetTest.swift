import FleetSync
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
  /// nothing more. Records an issue after 10 s, also when its loop no longer runs jobs.
  func loopEnded() async {
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline {
      // The model tells of neither (no event is made for tests), so both are asked again.
      if !protected.withLock({ $0.follower.isFollowing }),
        await noCallInFlight(by: deadline) == true
      {
        return
      }
      try? await Task.sleep(for: .milliseconds(5))
    }
    Issue.record("\(tripName) was still following 10 s later")
  }

  /// Whether the model has no call in flight, as its loop (which alone records the calls)
  /// sees it; nil if the loop has not answered by `deadline` (a loop that has shut down runs
  /// no job).
  func noCallInFlight(by deadline: ContinuousClock.Instant) async -> Bool? {
    // Resumed once: by the loop's answer or by the deadline, whichever comes first.
    let hop = PosixMutex<(waiting: CheckedContinuation<Bool?, Never>?, over: Bool)>((nil, false))
    @Sendable func answer(_ idle: Bool?) {
      let waiting = hop.withLock { hop in
        defer { hop = (nil, true) }
        return hop.waiting
      }
      waiting?.resume(returning: idle)
    }
    let timeout = Task {
      try? await Task.sleep(until: deadline)
      answer(nil)
    }
    defer { timeout.cancel() }
    return await withCheckedContinuation { continuation in
      let over = hop.withLock { hop in
        if !hop.over { hop.waiting = continuation }
        return hop.over
      }
      if over { return continuation.resume(returning: nil) }
      lane.loop.execute { answer(self.onLoop.value.call == nil) }
    }
  }
}
