import Testing

@testable import FleetConsumer

/// The follow machine alone: each test walks it to a state through legal events, sends one
/// event, and checks the action.
@Suite("The follow state machine")
struct TripFollowerTests {
  private static let policy = RetryPolicy(
    initialBackoff: .seconds(1), maximumBackoff: .seconds(60), jitter: 0)

  private enum Stage {
    case inactive, waiting, polling, finished
  }

  /// A machine in `stage` of generation 1 (its first loop).
  private func machine(_ stage: Stage) -> TripFollower {
    var follower = TripFollower(pollInterval: .seconds(5), retryPolicy: Self.policy)
    guard stage != .inactive else { return follower }
    _ = follower.start()
    guard stage != .waiting else { return follower }
    _ = follower.pollDue(generation: 1)
    guard stage != .polling else { return follower }
    var trip = FleetEngine.Trip()
    trip.tripStatus = .complete
    _ = follower.received(trip, generation: 1)
    return follower
  }

  private func trip(_ status: FleetEngine.TripStatus) -> FleetEngine.Trip {
    var trip = FleetEngine.Trip()
    trip.tripStatus = status
    return trip
  }

  @Test("start from inactive starts loop 1 and reports the state change")
  func start() {
    var follower = machine(.inactive)
    #expect(follower.start() == .startLoop(generation: 1, events: [.stateChanged(.active)]))
    #expect(follower.isFollowing)
    #expect(follower.start() == .nothing)
  }

  @Test("a finished machine never starts again")
  func finishedStaysFinished() {
    var follower = machine(.finished)
    #expect(follower.start() == .nothing)
    #expect(follower.stop() == .nothing)
    #expect(follower.pollDue(generation: 1) == .exit)
    #expect(!follower.isFollowing)
  }

  @Test("a poll carries the versions held, none before the first response")
  func pollVersions() {
    var follower = machine(.waiting)
    #expect(follower.pollDue(generation: 1) == .poll(TripFollower.HeldVersions()))
    var response = trip(.new)
    var version = GoogleProtobuf.Timestamp()
    version.seconds = 7
    response.currentRouteSegmentVersion = version
    response.remainingWaypointsRouteVersion = version
    _ = follower.received(response, generation: 1)
    #expect(
      follower.pollDue(generation: 1)
        == .poll(
          TripFollower.HeldVersions(currentRouteSegment: version, remainingWaypointsRoute: version))
    )
  }

  @Test("a response delivers its changes and schedules the next poll after the interval")
  func response() {
    var follower = machine(.polling)
    guard case .deliver(let events, let next) = follower.received(trip(.new), generation: 1) else {
      Issue.record("expected .deliver")
      return
    }
    #expect(events.count == 2)
    #expect(next == .seconds(5))
    _ = follower.pollDue(generation: 1)
    #expect(follower.received(trip(.new), generation: 1) == .deliver([], nextPollIn: .seconds(5)))
  }

  @Test("a terminal response finishes: its events, then the state change to inactive")
  func terminal() {
    var follower = machine(.polling)
    guard case .finish(let events) = follower.received(trip(.canceled), generation: 1) else {
      Issue.record("expected .finish")
      return
    }
    #expect(events.last == .stateChanged(.inactive))
    #expect(events.contains(.tripStatus(.canceled)))
    #expect(follower.pollDue(generation: 1) == .exit)
  }

  @Test("failures back off by category and reset after a success")
  func failures() {
    var follower = machine(.polling)
    let unavailable = RPCError(code: .unavailable, message: "down")
    #expect(
      follower.failed(unavailable, generation: 1, random: 0.5)
        == .report(unavailable, dropToken: false, retryIn: .seconds(1)))
    _ = follower.pollDue(generation: 1)
    guard case .report(_, _, let second) = follower.failed(unavailable, generation: 1, random: 0.5)
    else { return }
    #expect(second == .seconds(1.6))
    _ = follower.pollDue(generation: 1)
    _ = follower.received(trip(.new), generation: 1)
    _ = follower.pollDue(generation: 1)
    #expect(
      follower.failed(unavailable, generation: 1, random: 0.5)
        == .report(unavailable, dropToken: false, retryIn: .seconds(1)))
  }

  @Test("UNAUTHENTICATED drops the token and retries at once, once per success")
  func unauthenticated() {
    var follower = machine(.polling)
    let refused = RPCError(code: .unauthenticated, message: "expired")
    #expect(
      follower.failed(refused, generation: 1, random: 0.5)
        == .report(refused, dropToken: true, retryIn: .zero))
    _ = follower.pollDue(generation: 1)
    #expect(
      follower.failed(refused, generation: 1, random: 0.5)
        == .report(refused, dropToken: true, retryIn: .seconds(6.4)))
  }

  @Test("a failed token fetch drops nothing and waits the client backoff")
  func tokenFetchFailed() {
    var follower = machine(.polling)
    let failed = RPCError(code: .unauthenticated, message: "provider down")
    #expect(
      follower.failed(failed, generation: 1, tokenFetchFailed: true, random: 0.5)
        == .report(failed, dropToken: false, retryIn: .seconds(4)))
  }

  @Test("stop cancels the loop; its late result is ignored; a restart is a new generation")
  func stopAndRestart() {
    var follower = machine(.polling)
    #expect(follower.stop() == .stopLoop(generation: 1))
    #expect(follower.received(trip(.new), generation: 1) == .ignore)
    #expect(
      follower.failed(RPCError(code: .cancelled, message: ""), generation: 1, random: 0) == .ignore)
    #expect(follower.trip == nil)
    #expect(follower.start() == .startLoop(generation: 2, events: [.stateChanged(.active)]))
    #expect(follower.pollDue(generation: 1) == .exit)
    #expect(follower.pollDue(generation: 2) == .poll(TripFollower.HeldVersions()))
  }

  @Test("the merged trip survives a stop and a restart")
  func tripSurvivesRestart() {
    var follower = machine(.polling)
    _ = follower.received(trip(.enrouteToPickup), generation: 1)
    _ = follower.stop()
    _ = follower.start()
    #expect(follower.trip?.tripStatus == .enrouteToPickup)
    _ = follower.pollDue(generation: 2)
    // The same status again: nothing to report.
    #expect(
      follower.received(trip(.enrouteToPickup), generation: 2)
        == .deliver([], nextPollIn: .seconds(5)))
  }

  @Test("a feed stream stays in flight across updates and ends into a reconnect or polling")
  func feedStream() {
    var follower = machine(.waiting)
    #expect(
      follower.pollDue(generation: 1, feedAvailable: true) == .watch(TripFollower.HeldVersions()))
    _ = follower.received(trip(.new), generation: 1)
    // Still in flight: a second update is taken, and no new call may start.
    guard case .deliver(let events, _) = follower.received(trip(.enrouteToPickup), generation: 1)
    else {
      Issue.record("expected .deliver")
      return
    }
    #expect(events.contains(.tripStatus(.enrouteToPickup)))
    #expect(follower.watchEnded(generation: 1) == .seconds(5))
    #expect(follower.watchEnded(generation: 1) == nil)

    _ = follower.pollDue(generation: 1, feedAvailable: true)
    #expect(follower.feedUnimplemented(generation: 1) == .zero)
    #expect(follower.pollDue(generation: 1, feedAvailable: false) != .exit)
    // A poll is not a stream: its answer ends the call.
    _ = follower.received(trip(.enrouteToPickup), generation: 1)
    #expect(follower.watchEnded(generation: 1) == nil)
  }

  // MARK: Moved due times: refresh and a per-model interval

  @Test("refresh while waiting moves the due time; the old scheduler entry starts nothing")
  func refreshWhileWaiting() {
    var follower = machine(.waiting)
    follower.scheduled(generation: 1, at: 5_000)
    #expect(follower.refresh(now: 1_000) == .pollNow(generation: 1, due: 1_000))
    #expect(follower.pollDue(generation: 1, due: 5_000) == .exit)
    #expect(follower.pollDue(generation: 1, due: 1_000) == .poll(TripFollower.HeldVersions()))
  }

  @Test("refresh during a call, or when not following, does nothing")
  func refreshCoalesced() {
    var polling = machine(.polling)
    #expect(polling.refresh(now: 1_000) == .nothing)
    var inactive = machine(.inactive)
    #expect(inactive.refresh(now: 1_000) == .nothing)
    var finished = machine(.finished)
    #expect(finished.refresh(now: 1_000) == .nothing)
  }

  @Test("a new interval moves a waiting poll to the last due time plus the new interval")
  func newInterval() throws {
    var follower = machine(.waiting)
    // Waiting for a poll due at 10 s, the previous one having been due at 5 s.
    let second: UInt64 = 1_000_000_000
    follower.scheduled(generation: 1, at: 10 * second)
    #expect(
      follower.setPollInterval(.seconds(1), now: 6 * second)
        == .pollNow(generation: 1, due: 6 * second))
    #expect(follower.pollInterval == .seconds(1))
    // Longer again: due 20 s after the virtual previous poll (at 5 s), so at 25 s.
    #expect(
      follower.setPollInterval(.seconds(20), now: 7 * second)
        == .pollNow(generation: 1, due: 25 * second))
    // Back to the service's (5 s), past that time already: at once.
    #expect(
      follower.setPollInterval(nil, now: 30 * second)
        == .pollNow(generation: 1, due: 30 * second))
    #expect(follower.pollInterval == .seconds(5))
  }

  @Test("a new interval during a call or a retry keeps its time, and applies afterwards")
  func newIntervalLater() {
    var polling = machine(.polling)
    #expect(polling.setPollInterval(.seconds(1), now: 0) == .nothing)
    guard case .deliver(_, let next) = polling.received(trip(.new), generation: 1) else {
      Issue.record("no delivery")
      return
    }
    #expect(next == .seconds(1))
    var retrying = machine(.polling)
    _ = retrying.failed(RPCError(code: .unavailable, message: "down"), generation: 1, random: 0)
    retrying.scheduled(generation: 1, at: 9_000)
    #expect(retrying.setPollInterval(.seconds(1), now: 0) == .nothing)
    #expect(retrying.pollDue(generation: 1, due: 9_000) == .poll(TripFollower.HeldVersions()))
  }
}
