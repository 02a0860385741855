internal import FleetSync
internal import FoundationEssentials
internal import Logging

/// The access tokens of one ``TripService``, cached per trip ID, fetched once at a time.
///
/// A token is reused until `refreshMargin` before it expires, where the margin is never
/// more than half the token's lifetime (from when it was fetched), so a short-lived token is
/// still reused for half its life; a token is never handed out once expired. A token without
/// an expiry is given its JWT's `exp` when it is a JWT, and otherwise reused until
/// ``invalidate(_:for:)``. Concurrent requests for a trip whose
/// token is being fetched wait for that one fetch. Entries are removed when their model goes
/// away (``remove(tripID:)``).
final class TokenCache: Sendable {
  private enum Entry {
    case fetching(id: UInt64, Task<AccessToken, any Error>)
    case ready(AccessToken, fetchedAt: Date)
  }

  private struct State {
    var entries: [String: Entry] = [:]
    var nextFetch: UInt64 = 0
  }

  private let provider: any AccessTokenProvider
  private let refreshMargin: Duration
  private let now: @Sendable () -> Date
  private let state = PosixMutex(State())
  private let logger: Logger

  init(
    provider: any AccessTokenProvider, refreshMargin: Duration, logger: Logger = .disabled,
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.logger = logger
    self.provider = provider
    self.refreshMargin = refreshMargin
    self.now = now
  }

  /// A valid token for `context`'s trip: the cached one, or the one being fetched, or a new
  /// fetch. Throws the provider's failure as an ``RPCError`` (UNAUTHENTICATED unless the
  /// provider threw an `RPCError`), also to every caller that shared the fetch.
  func token(for context: AuthorizationContext) async throws(RPCError) -> AccessToken {
    let tripID = context.tripID
    let fetch: Task<AccessToken, any Error>
    switch lookUp(context) {
    case .cached(let token): return token
    case .wait(let task): fetch = task
    }
    do {
      return try await fetch.value
    } catch let error as RPCError {
      throw error
    } catch {
      throw RPCError(
        code: .unauthenticated,
        message: "could not get an access token for trip \(tripID): \(error)",
        cause: error)
    }
  }

  /// The cached token for `tripID` if it may still be handed out, and until when (nil: for
  /// as long as it is not invalidated); nil when it must be fetched (or is being fetched)
  /// first. Never waits and never starts a fetch: the event loop asks this when its last
  /// poll's token is no longer ``isReusable(until:)``, and goes through ``token(for:)`` only
  /// on a miss.
  func reusableToken(forTripID tripID: String) -> (token: AccessToken, until: Date?)? {
    state.withLock { state in
      guard case .ready(let token, let fetchedAt) = state.entries[tripID] else { return nil }
      let until = reusableUntil(token, fetchedAt: fetchedAt)
      guard isReusable(until: until) else { return nil }
      return (token, until)
    }
  }

  /// Whether a token ``reusableToken(forTripID:)`` gave as usable `until` still is.
  func isReusable(until: Date?) -> Bool {
    guard let until else { return true }
    return now() < until
  }

  private enum Lookup {
    case cached(AccessToken)
    case wait(Task<AccessToken, any Error>)
  }

  private func lookUp(_ context: AuthorizationContext) -> Lookup {
    let tripID = context.tripID
    return state.withLock { state in
      switch state.entries[tripID] {
      case .ready(let token, let fetchedAt) where isUsable(token, fetchedAt: fetchedAt):
        return .cached(token)
      case .fetching(_, let task):
        return .wait(task)
      case .ready, nil:
        state.nextFetch += 1
        let id = state.nextFetch
        // Created under the lock so that concurrent callers find it; it runs elsewhere.
        let task = Task { try await self.fetch(context, id: id) }
        state.entries[tripID] = .fetching(id: id, task)
        return .wait(task)
      }
    }
  }

  /// Forgets `token` for `tripID` after the server refused it, so the next request fetches
  /// a new one; a different (newer) cached token is left alone.
  func invalidate(_ token: AccessToken, for tripID: String) {
    state.withLock { state in
      if case .ready(let cached, _) = state.entries[tripID], cached == token {
        state.entries[tripID] = nil
      }
    }
  }

  /// Forgets everything about `tripID`.
  func remove(tripID: String) {
    state.withLock { state in
      if case .ready = state.entries[tripID] { state.entries[tripID] = nil }
    }
  }

  /// The number of trips with a cached or pending token.
  var count: Int { state.withLock { $0.entries.count } }

  private func fetch(_ context: AuthorizationContext, id: UInt64) async throws -> AccessToken {
    let tripID = context.tripID
    let result: Result<AccessToken, any Error>
    do {
      // Any provider's JWT without a stated expiry is refreshed before its own `exp`.
      let token = try await provider.accessToken(for: context).withJWTExpiry()
      let fetchedAt = now()
      if let expiresAt = token.expiresAt, expiresAt <= fetchedAt {
        throw AccessTokenProviderError(
          "the provider returned a token that had already expired (at \(expiresAt))")
      }
      result = .success(token)
      // The token's expiry, never its value.
      logger.debug(
        "access token fetched",
        metadata: [
          "fleet.trip_id": "\(tripID)",
          "fleet.token_expires_at": "\(token.expiresAt.map { "\($0)" } ?? "none")",
        ])
    } catch {
      result = .failure(error)
    }
    let fetchedAt = now()
    state.withLock { state in
      guard case .fetching(id, _) = state.entries[tripID] else { return }
      switch result {
      case .success(let token): state.entries[tripID] = .ready(token, fetchedAt: fetchedAt)
      case .failure: state.entries[tripID] = nil
      }
    }
    return try result.get()
  }

  /// Whether `token` may still be handed out: before its expiry minus the margin, where the
  /// margin is at most half the token's lifetime.
  private func isUsable(_ token: AccessToken, fetchedAt: Date) -> Bool {
    isReusable(until: reusableUntil(token, fetchedAt: fetchedAt))
  }

  /// When `token` stops being handed out: its expiry minus the margin (nil: no expiry).
  private func reusableUntil(_ token: AccessToken, fetchedAt: Date) -> Date? {
    guard let expiresAt = token.expiresAt else { return nil }
    let lifetime = expiresAt.timeIntervalSince(fetchedAt)
    let margin = min(refreshMargin.seconds, max(lifetime, 0) / 2)
    return expiresAt.addingTimeInterval(-margin)
  }
}
