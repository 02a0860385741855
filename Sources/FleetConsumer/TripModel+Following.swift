internal import GRPCWire
internal import Logging
internal import FoundationEssentials

// How a model follows its trip: no task of its own. Its loop generation is an entry in the
// service's FollowScheduler; when due, the event loop starts a GetTrip (or a WatchTrip
// stream) with callbacks on the loop, the response is decoded and merged there, and the
// next due time goes back into the scheduler. Only a token that is not cached leaves the
// loop, for the provider's fetch.

extension TripModel {
  /// Following to begin once the lock is released.
  struct Start {
    let generation: UInt64
    let schedulesDrain: Bool
  }

  /// Inside the lock: starts following if not yet (queuing the state change).
  func startIfNeeded(_ state: inout Protected) -> Start? {
    guard case .startLoop(let generation, let events) = state.follower.start() else { return nil }
    core.metrics.startedFollowing()
    return Start(generation: generation, schedulesDrain: enqueue(events, &state))
  }

  /// Inside the lock: records that loop `generation`'s next call is due after `delay`;
  /// returns when, for ``FollowScheduler/schedule(_:generation:at:)`` outside the lock.
  func scheduleNext(
    _ generation: UInt64, after delay: Duration, _ state: inout Protected
  ) -> MonotonicInstant {
    scheduleNext(generation, at: MonotonicInstant.now.advanced(by: delay), &state)
  }

  /// Inside the lock: records that loop `generation`'s next call is due at `due`.
  func scheduleNext(
    _ generation: UInt64, at due: MonotonicInstant, _ state: inout Protected
  ) -> MonotonicInstant {
    state.follower.scheduled(generation: generation, at: due.nanoseconds)
    return due
  }

  /// Inside the lock: stops following; returns the generation stopped, whose call in flight
  /// ``cancelCall(of:)`` cancels outside the lock.
  func stopLoop(_ state: inout Protected) -> UInt64? {
    guard case .stopLoop(let generation) = state.follower.stop() else { return nil }
    core.metrics.stoppedFollowing()
    state.failCompletionWaiters(
      RPCError(
        code: .cancelled, message: "following \(tripName) stopped before the trip ended"))
    return generation
  }

  /// Outside the lock: cancels loop `generation`'s call in flight, on the loop (at once when
  /// called there). A call the loop makes for that generation after it stopped (it decided
  /// before the stop) is recorded before this runs, as the loop does one thing at a time, so
  /// it is cancelled too. A newer generation's call recorded first is left alone; its start
  /// cancelled this generation's (``OnLoop/record(_:of:)``).
  func cancelCall(of generation: UInt64) {
    guard lane.loop.inEventLoop else {
      lane.loop.execute { [self] in cancelCall(of: generation) }
      return
    }
    onLoop.value.takeCall(stopped: generation)?.cancel()
  }

  /// Outside the lock: makes the first call of `start`'s generation due at once — when the
  /// loop takes it in, so that models started together poll together (their requests share
  /// writes from then on). The follower records no due time for it: any entry of the new
  /// generation starts the first call.
  func launch(_ start: Start) {
    core.logger.debug("following", metadata: ["fleet.trip": "\(tripName)"])
    if start.schedulesDrain { scheduleDrain() }
    lane.scheduler.scheduleNow(self, generation: start.generation)
  }

  /// On the loop: loop `generation`'s next call was due at `due`.
  func pollDue(generation: UInt64, dueAt due: MonotonicInstant) {
    let room = core.feedAvailable ? lane.feedRoom() : .full
    if room == .unknown {
      // Asked again once the first connection has likely told the server's stream limit.
      let next = protected.withLock { state in
        scheduleNext(generation, after: .milliseconds(50), &state)
      }
      lane.scheduler.schedule(self, generation: generation, at: next)
      return
    }
    let feedAvailable = room == .room
    let (action, stopped) = protected.withLock { state in
      guard state.pruneSubscribers() else {
        // Every subscriber was deallocated: stop as if the last one had unregistered.
        return (TripFollower.OnPollDue.exit, stopLoop(&state))
      }
      return (
        state.follower.pollDue(
          generation: generation, due: due.nanoseconds, feedAvailable: feedAvailable),
        UInt64?.none
      )
    }
    if let stopped { cancelCall(of: stopped) }
    switch action {
    case .exit: return
    case .poll(let versions):
      core.logger.debug("polling", metadata: ["fleet.trip": "\(tripName)"])
      call(
        .poll(versions), generation: generation, dueAt: due,
        checked: Checked(template: onLoop.value.pollTemplate))
    case .watch(let versions):
      core.logger.debug("watching the trip feed", metadata: ["fleet.trip": "\(tripName)"])
      // Counted from now, not once the stream is made (after a token fetch, perhaps): the
      // trips deciding in the same tick see it.
      lane.feedOpened()
      call(.watch(versions), generation: generation, dueAt: due, checked: Checked(template: nil))
    }
  }

  /// What ``pollDue(generation:dueAt:)`` found, for the call it starts at once: the
  /// generation was current (in its hold of the lock), and this was the poll template.
  /// (Stopped since, the call is cancelled once it is recorded: ``cancelCall(of:)``.)
  struct Checked {
    let template: PollTemplate?
  }

  /// The two calls a model makes.
  enum FollowCall: Sendable {
    case poll(TripFollower.HeldVersions)
    case watch(TripFollower.HeldVersions)
  }

  /// On the loop: makes `kind` with the cached token, or fetches one first, off the loop (a
  /// provider may run a command or an HTTP request), and comes back.
  func call(
    _ kind: FollowCall, generation: UInt64, dueAt due: MonotonicInstant, checked: Checked
  ) {
    // The last poll's token while the cache would still hand it out: the cache is asked only
    // when it may not (or after the server refused it, which drops the template).
    if case .poll = kind, let template = checked.template,
      core.tokens.isReusable(until: template.tokenReusableUntil)
    {
      start(
        kind, token: template.token, reusableUntil: template.tokenReusableUntil,
        generation: generation, dueAt: due, checked: checked)
      return
    }
    if let (token, until) = core.tokens.reusableToken(forTripID: tripName.tripID) {
      start(
        kind, token: token, reusableUntil: until, generation: generation, dueAt: due,
        checked: checked)
      return
    }
    let loop = lane.loop
    Task { [self] in
      let fetched: Result<AccessToken, RPCError>
      do throws(RPCError) {
        fetched = .success(
          try await core.tokens.token(for: AuthorizationContext(tripName: tripName)))
      } catch {
        fetched = .failure(error)
      }
      loop.execute {
        switch fetched {
        case .success(let token):
          // Not known how long the cache keeps it: the next poll asks the cache.
          self.start(
            kind, token: token, reusableUntil: .distantPast, generation: generation, dueAt: due,
            checked: nil)
        case .failure(let error):
          self.notStarted(kind)
          self.failed(PollFailure(error: error, token: nil), generation: generation)
        }
      }
    }
  }

  /// On the loop: starts the call, with callbacks that hand its outcome to the follower.
  /// `token` may be handed out until `reusableUntil` (``TokenCache/reusableToken(forTripID:)``);
  /// `checked` is nil when the generation and template are to be read again (after a token
  /// fetch).
  func start(
    _ kind: FollowCall, token: AccessToken, reusableUntil: Date?, generation: UInt64,
    dueAt due: MonotonicInstant, checked: Checked?
  ) {
    let (current, template) =
      checked.map { (true, $0.template) }
      ?? (
        protected.withLock { state in state.follower.generation == generation },
        onLoop.value.pollTemplate
      )
    // Stopped while the token was fetched: send nothing.
    guard current else { return notStarted(kind) }
    let call: LoopCall
    var made: PollTemplate? = nil
    do throws(RPCError) {
      switch kind {
      case .poll(let versions):
        // A poll repeats its request and its fields until the versions or the token change:
        // encoded and checked once, not on every poll.
        let poll: PollTemplate
        if let template, template.versions == versions, template.token == token,
          template.tokenReusableUntil == reusableUntil
        {
          poll = template
        } else {
          let prepared: PreparedCall
          if let template, template.token == token {
            prepared = template.prepared
          } else {
            let path = FleetEngine.TripService.getTrip.path
            prepared = try lane.prepared(path, token: token) { () throws(RPCError) in
              try lane.channel.prepare(
                path: path,
                options: CallOptions(timeout: core.options.callTimeout, metadata: metadata(token)))
            }
          }
          poll = PollTemplate(
            versions: versions, framed: GRPCChannel.frame(request(sending: versions)),
            token: token, tokenReusableUntil: reusableUntil, prepared: prepared)
          made = poll
        }
        call = try lane.channel.startUnary(
          poll.prepared, framedRequest: poll.framed,
          receiver: PollReceiver(model: self, generation: generation, token: token, due: due))
      case .watch(let versions):
        // No deadline: the stream lasts as long as the trip; stopping cancels it.
        let path = FleetFeed.TripFeed.watchTrip.path
        let prepared = try lane.prepared(path, token: token) { () throws(RPCError) in
          try lane.channel.prepare(
            path: path, options: CallOptions(metadata: metadata(token)), kind: .serverStreaming)
        }
        call = try lane.channel.startServerStreaming(
          FleetFeed.TripFeed.watchTrip, watchRequest(sending: versions), prepared: prepared,
          receiver: FeedReceiver(model: self, generation: generation, token: token))
      }
    } catch {
      notStarted(kind)
      failed(PollFailure(error: error, token: token), generation: generation)
      return
    }
    // Recorded on the loop, with no lock: a stop since the generation was checked cancels
    // it on the loop, after this (``cancelCall(of:)``). An older generation's call still
    // recorded was stopped, but its cancel may be queued behind this start: cancelled here.
    onLoop.value.record(call, of: generation)?.cancel()
    if let made { onLoop.value.pollTemplate = made }
  }

  /// A call that was decided but never made: a feed stream gives its place back.
  private func notStarted(_ kind: FollowCall) {
    if case .watch = kind { lane.feedEnded() }
  }

  /// When the poll after one due at `due` is due: one `interval` later, so polls keep their
  /// rate however long the calls take, not after the answer came; intervals already missed
  /// (a slow call, a token fetch, a busy loop) are skipped rather than made up back to back.
  /// The phase stays that of the first due time, which callers spread (a service's trips
  /// then poll evenly across the interval instead of in bursts).
  static func nextDue(
    after due: MonotonicInstant, every interval: Duration, now: MonotonicInstant = .now
  ) -> MonotonicInstant {
    let next = due.advanced(by: interval)
    guard next <= now else { return next }
    let step = max(
      UInt64(interval.components.seconds) * 1_000_000_000
        + UInt64(interval.components.attoseconds / 1_000_000_000), 1)
    let missed = (now.nanoseconds - next.nanoseconds) / step + 1
    return MonotonicInstant(nanoseconds: next.nanoseconds + missed * step)
  }

  /// the loop. The stream holds it for as long as it is open, often the whole trip.
  final class FeedReceiver: ServerStreamReceiver {
    let model: TripModel
    let generation: UInt64
    /// The token the stream was opened with, dropped if the server refuses it.
    let token: AccessToken

    init(model: TripModel, generation: UInt64, token: AccessToken) {
      self.model = model
      self.generation = generation
      self.token = token
    }

    var deserializer: Merging { Merging(model: model, generation: generation, answer: .feed) }

    func received(_ merged: Merged) { model.applied(merged, generation: generation) }

    func ended(_ error: RPCError?) {
      model.lane.feedEnded()
      model.watchEnded(error, token: token, generation: generation)
    }
  }

  /// What a poll reports to, on the loop: its answer merged, or its failure. One object per
  /// poll, holding what the call needs to know (a deserializer and a closure took two).
  final class PollReceiver: UnaryCallReceiver {
    let model: TripModel
    let generation: UInt64
    /// The token the poll carried, dropped if the server refuses it.
    let token: AccessToken
    let due: MonotonicInstant

    init(model: TripModel, generation: UInt64, token: AccessToken, due: MonotonicInstant) {
      self.model = model
      self.generation = generation
      self.token = token
      self.due = due
    }

    func ended(_ result: Result<ReceivedMessage, RPCError>) {
      ended(result) { _ in }
    }

    var merging: Merging {
      Merging(model: model, generation: generation, answer: .poll(dueAt: due))
    }

    /// Merges the answer, then tells the call's loop interceptors how it ended (INTERNAL
    /// for an answer that does not decode), then settles the poll.
    func ended(
      _ result: Result<ReceivedMessage, RPCError>, reporting report: (RPCError?) -> Void
    ) {
      let merged = result.flatMap { $0.decoded(by: merging) }
      if case .failure(let error) = merged { report(error) } else { report(nil) }
      settle(merged)
    }

    /// Merges the answer where it arrived (no interceptors: no copy), then settles the poll.
    func ended(lending response: LentMessage) {
      settle(
        Result { () throws(ProtoDecodingError) in try merging.merge(bytes: response.bytes) }
          .mapError { ReceivedMessage.undecodable($0) })
    }

    private func settle(_ merged: Result<Merged, RPCError>) {
      switch merged {
      case .success(let merged): model.applied(merged, generation: generation)
      case .failure(let error):
        model.failed(PollFailure(error: error, token: token), generation: generation)
      }
    }
  }

  /// A failed call: the error, and the token it carried (nil when getting the token failed
  /// and nothing was sent).
  struct PollFailure: Error {
    let error: RPCError
    let token: AccessToken?
  }
}
