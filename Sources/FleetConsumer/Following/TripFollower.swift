internal import FleetProtos

/// The follow loop of one trip model, as a value: when to poll, what to tell subscribers, how
/// long to wait, and when to stop; the known trip, and how an answer is folded into it, is its
/// ``FollowedTrip``.
///
/// States: `inactive` (not following) → `following` (one loop generation, with a call in
/// flight — a `GetTrip` poll or a `WatchTrip` stream of the trip feed — or due later in the
/// service's ``FollowScheduler``)
/// → `finished` once a terminal status (COMPLETE, CANCELED) has been merged; `stop()` goes
/// back to `inactive`, and `start()` from there begins a new loop generation. The owner
/// (``TripModel``) keeps it inside its lock, feeds it events and does what they return,
/// outside the lock.
///
/// Unexpected events: a response, failure or poll-due from another generation than the
/// current one, or a result when no call is in flight, is a documented no-op (a stopped
/// generation's call may still be ending; its result is dropped, and its entry in the
/// scheduler starts nothing). `pollDue` while a call of the same generation is in flight is our bug (calls never
/// overlap): it asserts in debug builds and ends that loop.
struct TripFollower {
  enum State {
    case inactive
    case following(Following)
    case finished
  }

  struct Following {
    /// Which follow generation this is; results of older ones are ignored.
    var generation: UInt64
    /// Whether a call of this loop (a poll or a feed stream) is in flight.
    var polling = false
    /// Whether that call is a feed stream, whose updates keep it in flight.
    var watching = false
    /// Failures since the last successful update; picks the backoff step.
    var consecutiveFailures = 0
    /// Whether the immediate retry after UNAUTHENTICATED was used since the last success.
    var retriedUnauthenticated = false
    /// When the next call is due (nanoseconds on the monotonic clock), as last scheduled; 0
    /// for the first call, which any entry of this generation starts. Otherwise only the
    /// scheduler entry with this due time starts a call: entries left behind when
    /// ``refresh(now:)`` or a new interval moved the time are ignored.
    var nextDue: UInt64 = 0
    /// After a network failure, the earliest time (monotonic nanoseconds) a connection
    /// becoming ready may bring the retry forward (``channelReady(generation:now:)``); nil
    /// when the wait is not for the network (a server's answer, a token fetch) or is over.
    var wakeableFrom: UInt64?
  }

  private(set) var state = State.inactive
  /// The merged trip and how answers are folded into it.
  private var followed = FollowedTrip()
  /// The merged trip, nil before the first successful response.
  var trip: FleetEngine.Trip? { followed.trip }
  private var lastGeneration: UInt64 = 0
  /// How often to poll and how to back off: the same for every model of a service, so held
  /// once per service rather than copied into each follower (72 bytes a trip).
  final class Settings: Sendable {
    let pollInterval: Duration
    let retryPolicy: RetryPolicy
    /// Whether other trips' waypoints are removed (``FleetEngine/Trip/hideOtherTrips(after:ownTripID:)``).
    let hidesOtherTrips: Bool

    init(pollInterval: Duration, retryPolicy: RetryPolicy, hidesOtherTrips: Bool = true) {
      self.pollInterval = pollInterval
      self.retryPolicy = retryPolicy
      self.hidesOtherTrips = hidesOtherTrips
    }
  }

  let settings: Settings
  /// This model's own poll interval, set through ``TripModel/options``; nil: the service's.
  private(set) var intervalOverride: Duration?
  /// The poll interval in force.
  var pollInterval: Duration { intervalOverride ?? settings.pollInterval }
  var retryPolicy: RetryPolicy { settings.retryPolicy }

  init(settings: Settings) {
    self.settings = settings
  }

  init(pollInterval: Duration, retryPolicy: RetryPolicy, hidesOtherTrips: Bool = true) {
    self.init(
      settings: Settings(
        pollInterval: pollInterval, retryPolicy: retryPolicy, hidesOtherTrips: hidesOtherTrips))
  }

  /// The running loop's generation, nil when not following.
  var generation: UInt64? {
    switch state {
    case .following(let following): following.generation
    case .inactive, .finished: nil
    }
  }

  var isFollowing: Bool {
    switch state {
    case .following: true
    case .inactive, .finished: false
    }
  }

  // MARK: Events

  enum OnStart: Equatable {
    /// Start loop `generation` (its first poll is due at once) and deliver `events`.
    case startLoop(generation: UInt64, events: [TripModelEvent])
    /// Already following, or finished: nothing to do.
    case nothing
  }

  /// A subscriber arrived.
  mutating func start() -> OnStart {
    switch state {
    case .inactive:
      lastGeneration += 1
      state = .following(Following(generation: lastGeneration))
      return .startLoop(generation: lastGeneration, events: [.stateChanged(.active)])
    case .following, .finished:
      return .nothing
    }
  }

  enum OnStop: Equatable {
    /// Stop generation `generation` (its call in flight, if any, is cancelled and reset).
    case stopLoop(generation: UInt64)
    case nothing
  }

  /// The last subscriber left.
  mutating func stop() -> OnStop {
    switch state {
    case .following(let following):
      state = .inactive
      return .stopLoop(generation: following.generation)
    case .inactive, .finished:
      return .nothing
    }
  }

  enum OnPollDue: Equatable {
    /// Call `GetTrip` sending these versions.
    case poll(HeldVersions)
    /// Open a `WatchTrip` stream of the trip feed sending these versions.
    case watch(HeldVersions)
    /// The loop is over: stopped, finished, or superseded.
    case exit
  }

  /// Loop `generation` is ready for its next call; `feedAvailable` says whether to try the
  /// streaming trip feed rather than a poll.
  ///
  /// `due` is the time the scheduler entry was due at: an entry the follower no longer waits
  /// for (its time was moved by ``refresh(now:)`` or ``setPollInterval(_:now:)``) starts
  /// nothing. Nil skips that check (tests that drive the follower by hand).
  mutating func pollDue(
    generation: UInt64, due: UInt64? = nil, feedAvailable: Bool = false
  ) -> OnPollDue {
    switch state {
    case .following(let following)
    where following.generation == generation && due != nil && following.nextDue != 0
      && due != following.nextDue:
      return .exit
    case .following(var following) where following.generation == generation:
      guard !following.polling else {
        assertionFailure("a poll was due while the previous one was still in flight")
        return .exit
      }
      following.polling = true
      following.watching = feedAvailable
      following.wakeableFrom = nil
      state = .following(following)
      let versions = trip.map(HeldVersions.init(held:)) ?? HeldVersions()
      return feedAvailable ? .watch(versions) : .poll(versions)
    case .following, .inactive, .finished:
      return .exit
    }
  }

  /// Loop `generation`'s next call was scheduled for `due` (monotonic nanoseconds): only
  /// that entry may start it. Ignored for a stale generation.
  mutating func scheduled(generation: UInt64, at due: UInt64) {
    guard case .following(var following) = state, following.generation == generation else {
      return
    }
    following.nextDue = due
    state = .following(following)
  }

  enum OnRefresh: Equatable {
    /// Make loop `generation`'s next call due now (it was recorded as due at `due`).
    case pollNow(generation: UInt64, due: UInt64)
    /// A call is in flight (it is the refresh), or the model is not following.
    case nothing
  }

  /// ``TripModel/refresh()``: poll at once, unless a call is in flight already (the refresh
  /// then is that call) or the model is not following.
  mutating func refresh(now: UInt64) -> OnRefresh {
    guard case .following(var following) = state, !following.polling else { return .nothing }
    following.nextDue = now
    state = .following(following)
    return .pollNow(generation: following.generation, due: now)
  }

  /// Sets this model's poll interval (nil: the service's again). Returns the new due time of
  /// the next poll when one is waiting and it moved: the last poll's due time plus the new
  /// interval, or `now` if that has passed. A call in flight, or a retry after a failure,
  /// keeps its time; the new interval applies from the next answer.
  mutating func setPollInterval(_ interval: Duration?, now: UInt64) -> OnRefresh {
    let old = pollInterval
    intervalOverride = interval
    guard case .following(var following) = state, !following.polling,
      following.consecutiveFailures == 0, following.nextDue != 0, pollInterval != old
    else { return .nothing }
    let lastDue = Int64(bitPattern: following.nextDue) - Self.nanoseconds(old)
    let moved = UInt64(max(Int64(now), lastDue + Self.nanoseconds(pollInterval)))
    guard moved != following.nextDue else { return .nothing }
    following.nextDue = moved
    state = .following(following)
    return .pollNow(generation: following.generation, due: moved)
  }

  /// Whether loop `generation` waits for its channel to have a ready connection again (it
  /// backs off after a network failure): the owner then asks the channel to say when.
  func waitsForNetwork(generation: UInt64) -> Bool {
    guard case .following(let following) = state, following.generation == generation else {
      return false
    }
    return !following.polling && following.wakeableFrom != nil
  }

  /// A connection of the channel became ready while loop `generation` may be backing off
  /// after a network failure: its next call moves up to now — or to the end of the retry
  /// policy's initial backoff after the failure, if that is later, so a server that accepts
  /// connections and drops them at once is not called in a tight loop. Nothing when the wait
  /// is for a server's answer (its backoff and `RetryInfo` stand), a call is in flight, or the
  /// retry is due sooner anyway.
  mutating func channelReady(generation: UInt64, now: UInt64) -> OnRefresh {
    guard case .following(var following) = state, following.generation == generation,
      !following.polling, let from = following.wakeableFrom
    else { return .nothing }
    following.wakeableFrom = nil
    let due = max(now, from)
    guard following.nextDue == 0 || due < following.nextDue else {
      state = .following(following)
      return .nothing
    }
    following.nextDue = due
    state = .following(following)
    return .pollNow(generation: following.generation, due: due)
  }

  private static func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
  }

  enum OnResponse: Equatable {
    /// Deliver `events` (possibly none), then poll again after `nextPollIn`.
    case deliver([TripModelEvent], nextPollIn: Duration)
    /// The trip reached a terminal status: deliver `events` (ending with the state change to
    /// inactive); the loop ends.
    case finish([TripModelEvent])
    /// A stale generation's response: drop it.
    case ignore
  }

  /// Loop `generation`'s call answered `bytes`, a serialized `Trip` (a poll's answer, or one
  /// update of a feed stream, which stays in flight; `nextPollIn` is then meaningless): only
  /// what changed is decoded, and with `digesting` the fields whose bytes are those of the
  /// last answer merged are left out before unpacking (``FollowedTrip``, ``TripWireDigests``).
  ///
  /// `ownTripID` is the followed trip's ID, for ``Settings/hidesOtherTrips`` (empty: hide
  /// nothing). Throws what unpacking `bytes` whole would, and then changes nothing.
  mutating func received(
    bytes: UnsafeRawBufferPointer, generation: UInt64, ownTripID: String = "",
    digesting: Bool = true
  ) throws(ProtoDecodingError) -> OnResponse {
    let changes = try followed.received(
      bytes: bytes, current: isCurrentCall(generation), ownTripID: ownTripID,
      hidesOtherTrips: settings.hidesOtherTrips, digesting: digesting)
    return settled(changes)
  }

  /// Whether loop `generation` is the one following and has a call in flight: only its
  /// answers are merged.
  private func isCurrentCall(_ generation: UInt64) -> Bool {
    guard case .following(let following) = state else { return false }
    return following.generation == generation && following.polling
  }

  /// The loop's next step once the call in flight was answered with `changes` merged (nil: a
  /// stale generation's answer, dropped).
  private mutating func settled(_ changes: TripChanges?) -> OnResponse {
    guard let changes, case .following(var following) = state else { return .ignore }
    if trip!.tripStatus.isTerminal {
      state = .finished
      return .finish(changes.events + [.stateChanged(.inactive)])
    }
    following.polling = following.watching
    following.wakeableFrom = nil
    following.consecutiveFailures = 0
    following.retriedUnauthenticated = false
    state = .following(following)
    return .deliver(changes.events, nextPollIn: pollInterval)
  }

  enum OnFailure: Equatable {
    /// Report `error`; drop the cached token first when `dropToken`; try again after
    /// `retryIn`.
    case report(RPCError, dropToken: Bool, retryIn: Duration)
    /// A stale generation's failure (typically the CANCELLED of a stopped loop): drop it.
    case ignore
  }

  /// Loop `generation`'s call failed with `error` (or, when `tokenFetchFailed`, getting its
  /// token did and nothing was sent) at `now` (monotonic nanoseconds); `random` is uniform in
  /// 0 ..< 1 and picks the backoff's jitter.
  ///
  /// A network failure (``RPCError/isNetworkFailure``) also makes the wait end early once the
  /// channel has a ready connection again (``channelReady(generation:now:)``).
  mutating func failed(
    _ error: RPCError, generation: UInt64, tokenFetchFailed: Bool = false, random: Double,
    now: UInt64 = 0
  ) -> OnFailure {
    switch state {
    case .following(var following) where following.generation == generation && following.polling:
      following.polling = false
      following.watching = false
      following.consecutiveFailures += 1
      var delay = retryPolicy.delay(
        after: error, consecutiveFailures: following.consecutiveFailures, random: random)
      // Only the server's UNAUTHENTICATED says the token was refused; a failed fetch cached
      // nothing and is retried after the usual backoff.
      let unauthenticated = error.code == .unauthenticated && !tokenFetchFailed
      // A stale token is the usual cause and a fresh one the usual cure: retry at once, once.
      if unauthenticated && !following.retriedUnauthenticated && error.retryDelay == nil {
        following.retriedUnauthenticated = true
        delay = .zero
      }
      following.wakeableFrom =
        error.isNetworkFailure && !tokenFetchFailed
        ? now &+ UInt64(clamping: Self.nanoseconds(min(delay, retryPolicy.initialBackoff))) : nil
      state = .following(following)
      return .report(error, dropToken: unauthenticated, retryIn: delay)
    case .following, .inactive, .finished:
      return .ignore
    }
  }

  /// Loop `generation`'s feed stream ended with OK before a terminal status (the server
  /// closed it): reconnect after the poll interval. Nil for a stale generation.
  mutating func watchEnded(generation: UInt64) -> Duration? {
    endWatch(generation: generation) ? pollInterval : nil
  }

  /// Loop `generation`'s feed stream was answered UNIMPLEMENTED: the server has no feed, so
  /// poll instead, at once and without reporting an error. Nil for a stale generation.
  mutating func feedUnimplemented(generation: UInt64) -> Duration? {
    endWatch(generation: generation) ? .zero : nil
  }

  /// Clears loop `generation`'s poll and watch flags once its feed stream has ended; false
  /// (and no change) for a stale generation or a loop that was not watching.
  private mutating func endWatch(generation: UInt64) -> Bool {
    switch state {
    case .following(var following)
    where following.generation == generation && following.polling && following.watching:
      following.polling = false
      following.watching = false
      state = .following(following)
      return true
    case .following, .inactive, .finished:
      return false
    }
  }
}
