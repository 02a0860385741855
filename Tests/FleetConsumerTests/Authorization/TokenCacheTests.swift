import FleetSync
import Foundation
import Testing

@testable import FleetConsumer

@Suite("Token cache")
struct TokenCacheTests {
  /// A clock the test moves by hand.
  final class ManualClock: Sendable {
    private let time = PosixMutex(Date(timeIntervalSince1970: 1_000_000))
    var now: Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
  }

  /// Hands out `token-1`, `token-2`, … each valid for `lifetime` seconds from the clock's now.
  final class SequenceProvider: AccessTokenProvider {
    let clock: ManualClock
    let lifetime: TimeInterval?
    let calls = FleetSyncCounter()
    let delay: Duration

    init(clock: ManualClock, lifetime: TimeInterval?, delay: Duration = .zero) {
      self.clock = clock
      self.lifetime = lifetime
      self.delay = delay
    }

    func accessToken(for context: AuthorizationContext) async throws -> AccessToken {
      let number = calls.increment()
      if delay > .zero { try await Task.sleep(for: delay) }
      return AccessToken(
        "\(context.tripID)-token-\(number)", expiresAt: lifetime.map { clock.now + $0 })
    }
  }

  private let context = AuthorizationContext(tripName: try! TripName("providers/p/trips/t"))

  private func cache(_ provider: SequenceProvider, margin: Duration = .seconds(60)) -> TokenCache {
    let clock = provider.clock
    return TokenCache(provider: provider, refreshMargin: margin, now: { clock.now })
  }

  @Test("a token is reused until the refresh margin before its expiry")
  func refreshMargin() async throws {
    let clock = ManualClock()
    let provider = SequenceProvider(clock: clock, lifetime: 3600)
    let tokens = cache(provider)
    #expect(try await tokens.token(for: context).token == "t-token-1")
    clock.advance(3600 - 61)
    #expect(try await tokens.token(for: context).token == "t-token-1")
    clock.advance(2)  // 59 s before expiry: inside the 60 s margin
    #expect(try await tokens.token(for: context).token == "t-token-2")
    #expect(provider.calls.value == 2)
  }

  @Test("the margin is at most half the lifetime, so short-lived tokens are still reused")
  func shortLived() async throws {
    let clock = ManualClock()
    let provider = SequenceProvider(clock: clock, lifetime: 30)
    let tokens = cache(provider)
    _ = try await tokens.token(for: context)
    clock.advance(14)
    #expect(try await tokens.token(for: context).token == "t-token-1")
    clock.advance(2)  // past half of its 30 s
    #expect(try await tokens.token(for: context).token == "t-token-2")
  }

  @Test("a token is never handed out after it expired, and an expired one is refused")
  func expired() async throws {
    let clock = ManualClock()
    let provider = SequenceProvider(clock: clock, lifetime: 10)
    let tokens = cache(provider, margin: .zero)
    _ = try await tokens.token(for: context)
    clock.advance(10)
    #expect(try await tokens.token(for: context).token == "t-token-2")

    let stale = SequenceProvider(clock: clock, lifetime: -1)
    let error = await #expect(throws: RPCError.self) { try await cache(stale).token(for: context) }
    #expect(error?.code == .unauthenticated)
    #expect(error?.message.contains("already expired") == true)
  }

  @Test("a token without expiry is reused until invalidated")
  func noExpiry() async throws {
    let clock = ManualClock()
    let provider = SequenceProvider(clock: clock, lifetime: nil)
    let tokens = cache(provider)
    let first = try await tokens.token(for: context)
    clock.advance(1_000_000)
    #expect(try await tokens.token(for: context) == first)
    tokens.invalidate(AccessToken("some other token"), for: "t")
    #expect(try await tokens.token(for: context) == first)
    tokens.invalidate(first, for: "t")
    #expect(try await tokens.token(for: context).token == "t-token-2")
  }

  @Test("concurrent requests for one trip share one fetch; other trips fetch their own")
  func singleFlight() async throws {
    let clock = ManualClock()
    let provider = SequenceProvider(clock: clock, lifetime: 3600, delay: .milliseconds(100))
    let tokens = cache(provider)
    let other = AuthorizationContext(tripName: try TripName("providers/p/trips/u"))
    let context = self.context
    let results = try await withThrowingTaskGroup(of: String.self) { group in
      for index in 0..<50 {
        group.addTask { try await tokens.token(for: index % 2 == 0 ? context : other).token }
      }
      return try await group.reduce(into: Set<String>()) { $0.insert($1) }
    }
    #expect(results == ["t-token-1", "u-token-2"] || results == ["t-token-2", "u-token-1"])
    #expect(provider.calls.value == 2)
  }

  @Test("a provider's failure becomes UNAUTHENTICATED with the cause, and is not cached")
  func providerFailure() async throws {
    struct Broken: AccessTokenProvider {
      let calls = FleetSyncCounter()
      func accessToken(for context: AuthorizationContext) async throws -> AccessToken {
        if calls.increment() == 1 { throw AccessTokenProviderError("backend down") }
        return AccessToken("ok")
      }
    }
    let tokens = TokenCache(provider: Broken(), refreshMargin: .seconds(60))
    let error = await #expect(throws: RPCError.self) { try await tokens.token(for: context) }
    #expect(error?.code == .unauthenticated)
    #expect(error?.category == .client)
    #expect(error?.message == "could not get an access token for trip t: backend down")
    #expect(try await tokens.token(for: context).token == "ok")
  }

  @Test("descriptions never show the token")
  func masked() {
    let token = AccessToken("secret-jwt", expiresAt: nil)
    #expect(!token.description.contains("secret"))
    #expect(!"\(token)".contains("secret"))
  }
}
