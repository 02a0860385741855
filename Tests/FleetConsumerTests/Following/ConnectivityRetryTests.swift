import Foundation
import Testing

@testable import FleetConsumer

/// Connectivity-aware retry in the follow machine alone: after a network failure a
/// connection becoming ready brings the retry forward; after a server's answer it does not.
@Suite("Retry when the connection is back")
struct ConnectivityRetryTests {
  private static let policy = RetryPolicy(
    initialBackoff: .seconds(1), maximumBackoff: .seconds(60), jitter: 0)
  private static let second: UInt64 = 1_000_000_000

  /// A machine of generation 1 with its first poll in flight.
  private func polling() -> TripFollower {
    var follower = TripFollower(pollInterval: .seconds(1), retryPolicy: Self.policy)
    _ = follower.start()
    _ = follower.pollDue(generation: 1)
    return follower
  }

  /// `follower` failed with `error` at `now` and scheduled its retry after the backoff, as
  /// its model does; returns that retry's due time.
  private func fail(
    _ follower: inout TripFollower, _ error: RPCError, at now: UInt64,
    tokenFetchFailed: Bool = false
  ) -> UInt64 {
    guard
      case .report(_, _, let retryIn) = follower.failed(
        error, generation: 1, tokenFetchFailed: tokenFetchFailed, random: 0.5, now: now)
    else {
      Issue.record("the failure was not reported")
      return 0
    }
    let due = now + UInt64(retryIn.components.seconds) * Self.second
      + UInt64(retryIn.components.attoseconds / 1_000_000_000)
    follower.scheduled(generation: 1, at: due)
    return due
  }

  /// An error as the server sends it: status `code`, with a RetryInfo of `seconds` if given.
  private func fromServer(_ code: StatusCode, retryDelaySeconds seconds: Int64? = nil) -> RPCError {
    var delay = GoogleProtobuf.Duration()
    delay.seconds = seconds ?? 0
    return .fromServer(code, message: "busy", retryDelay: seconds == nil ? nil : delay)
  }

  static let networkFailures: [RPCError] = [
    RPCError.interrupted("the peer reset the connection"),
    RPCError(code: .unavailable, message: "connecting timed out"),
    RPCError(code: .deadlineExceeded, message: "the call's deadline passed"),
  ]

  @Test("after a network failure, a ready connection makes the retry due at once", arguments: networkFailures)
  func networkFailure(_ error: RPCError) {
    #expect(error.isNetworkFailure)
    var follower = polling()
    // Four failures: the backoff has grown to 4.1 s.
    var now: UInt64 = 100 * Self.second
    var due: UInt64 = 0
    for _ in 0..<4 {
      due = fail(&follower, error, at: now)
      #expect(follower.waitsForNetwork(generation: 1))
      now = due
      _ = follower.pollDue(generation: 1, due: due)
    }
    due = fail(&follower, error, at: now)
    #expect(due - now > 4 * Self.second)
    let ready = now + 2 * Self.second
    #expect(follower.channelReady(generation: 1, now: ready) == .pollNow(generation: 1, due: ready))
    // The backoff's own entry, left in the scheduler, starts nothing; the new one polls.
    #expect(follower.pollDue(generation: 1, due: due) == .exit)
    #expect(follower.pollDue(generation: 1, due: ready) == .poll(TripFollower.HeldVersions()))
  }

  @Test("a connection ready sooner than the initial backoff after the failure waits for it")
  func floorOfInitialBackoff() {
    var follower = polling()
    let first = fail(&follower, RPCError.interrupted("reset"), at: 100 * Self.second)
    _ = follower.pollDue(generation: 1, due: first)
    // The second failure backs off 1.6 s; the initial backoff is 1 s.
    let now = first
    _ = fail(&follower, RPCError.interrupted("reset"), at: now)
    let ready = now + Self.second / 10
    #expect(
      follower.channelReady(generation: 1, now: ready)
        == .pollNow(generation: 1, due: now + Self.second))
    // One early retry per failure: a second ready connection changes nothing.
    #expect(follower.channelReady(generation: 1, now: ready) == .nothing)
  }

  @Test("a server's UNAVAILABLE with RetryInfo keeps its delay when a connection is ready")
  func serverRetryInfo() {
    let error = fromServer(.unavailable, retryDelaySeconds: 5)
    #expect(error.isFromServer)
    #expect(!error.isNetworkFailure)
    var follower = polling()
    let now: UInt64 = 100 * Self.second
    let due = fail(&follower, error, at: now)
    #expect(due == now + 5 * Self.second)
    #expect(!follower.waitsForNetwork(generation: 1))
    #expect(follower.channelReady(generation: 1, now: now + Self.second) == .nothing)
    #expect(follower.pollDue(generation: 1, due: now + Self.second) == .exit)
    #expect(follower.pollDue(generation: 1, due: due) == .poll(TripFollower.HeldVersions()))
  }

  @Test(
    "server answers keep their backoff",
    arguments: [StatusCode.unavailable, .resourceExhausted, .deadlineExceeded, .internalError])
  func serverAnswers(_ code: StatusCode) {
    var follower = polling()
    let now: UInt64 = 100 * Self.second
    _ = fail(&follower, fromServer(code), at: now)
    #expect(!follower.waitsForNetwork(generation: 1))
    #expect(follower.channelReady(generation: 1, now: now + 2 * Self.second) == .nothing)
  }

  @Test("a failed token fetch sent nothing: its backoff stands")
  func tokenFetch() {
    var follower = polling()
    let now: UInt64 = 100 * Self.second
    _ = fail(
      &follower, RPCError(code: .unavailable, message: "provider down"), at: now,
      tokenFetchFailed: true)
    #expect(follower.channelReady(generation: 1, now: now + 2 * Self.second) == .nothing)
  }

  @Test("a stale generation, or a call in flight, is not woken")
  func staleOrPolling() {
    var follower = polling()
    let now: UInt64 = 100 * Self.second
    _ = fail(&follower, RPCError.interrupted("reset"), at: now)
    #expect(follower.channelReady(generation: 2, now: now + 2 * Self.second) == .nothing)
    _ = follower.stop()
    #expect(follower.channelReady(generation: 1, now: now + 2 * Self.second) == .nothing)
  }
}
