internal import GRPCWire
internal import Logging
internal import FleetProtos

/// What the follow calls bring back, on the loop: a response merged into the model (events
/// queued for the subscribers), a failure counted and retried or reported, a feed stream's end.
extension TripModel {
  /// What merging one response into the model left to do outside its lock.
  struct Merged: Sendable {
    /// A drain must be scheduled for the events it queued.
    let drain: Bool
    /// A poll's answer: when the next poll is due (nil once the trip ended, or for a stale
    /// answer).
    let next: MonotonicInstant?
    /// A feed's update that ended the trip: its stream, which nothing more is wanted from.
    let ended: LoopCall?
  }

  /// What a response answers.
  enum Answer: Sendable {
    /// The poll that was due at `dueAt`.
    case poll(dueAt: MonotonicInstant)
    /// The feed stream (a `TripUpdate`, which carries the trip), which stays open.
    case feed
  }

  /// The deserializer of a model's calls: it merges each response into the model as it
  /// decodes it, on the loop and under the model's lock, from the trip's bytes: only what
  /// changed is decoded, and a poll's answer leaves out the fields whose bytes repeat
  /// (``FollowedTrip``).
  /// What it throws fails the call with INTERNAL, as a response that does not decode always
  /// has, and changes nothing.
  struct Merging: MessageDeserializer {
    let model: TripModel
    let generation: UInt64
    let answer: Answer

    func deserialize(_ message: ReceivedMessage) throws -> Merged {
      try message.bytes.withUnsafeBytes { try merge(bytes: $0) }
    }

    /// Merges the response in `bytes` (a poll's answer is read where it arrived: no copy).
    func merge(bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError) -> Merged {
      guard case .feed = answer else {
        return try model.merge(generation: generation, answering: answer) {
          (follower, tripID) throws(ProtoDecodingError) in
          try follower.received(bytes: bytes, generation: generation, ownTripID: tripID)
        }
      }
      return try FeedUpdate.withTrip(in: bytes) { (trip) throws(ProtoDecodingError) in
        // An update without a trip changes nothing.
        guard let trip else { return Merged(drain: false, next: nil, ended: nil) }
        // Unpacked whole, as before, with no digests kept: the feed sends a trip only when it
        // changed, and digests would hold a hash per field and waypoint (about 0.2 KB) for
        // every streamed trip. Measured side by side, digesting feed updates saved no CPU
        // that the shared machine could tell apart.
        return try model.merge(generation: generation, answering: answer) {
          (follower, tripID) throws(ProtoDecodingError) in
          try follower.received(
            bytes: trip, generation: generation, ownTripID: tripID, digesting: false)
        }
      }
    }
  }

  /// On the loop, in one hold of the lock: hands a response to the follower (`receive`,
  /// given it and the trip's ID), queues its events, and settles the call it answers (a
  /// poll's next due time; a feed's stream once the trip ended).
  func merge(
    generation: UInt64, answering answer: Answer,
    _ receive: (inout TripFollower, String) throws(ProtoDecodingError) -> TripFollower.OnResponse
  ) throws(ProtoDecodingError) -> Merged {
    try protected.withLock { (state) throws(ProtoDecodingError) -> Merged in
      let action = try receive(&state.follower, tripName.tripID)
      var drain = false
      switch action {
      case .deliver(var events, _):
        core.metrics.updated()
        refreshed(&events, &state)
        drain = enqueue(events, &state)
      case .finish(var events):
        core.metrics.updated()
        // Before the closing state change.
        var update: [TripModelEvent] = []
        refreshed(&update, &state)
        events.insert(contentsOf: update, at: events.count - 1)
        drain = enqueue(events, &state)
      case .ignore: break
      }
      switch answer {
      case .poll(let due):
        onLoop.value.clearCall(of: generation)
        guard case .deliver(_, let nextPollIn) = action else {
          return Merged(drain: drain, next: nil, ended: nil)
        }
        let next = scheduleNext(generation, at: Self.nextDue(after: due, every: nextPollIn), &state)
        return Merged(drain: drain, next: next, ended: nil)
      case .feed:
        guard case .finish = action, let current = onLoop.value.call,
          current.generation == generation
        else { return Merged(drain: drain, next: nil, ended: nil) }
        onLoop.value.call = nil
        return Merged(drain: drain, next: nil, ended: current.call)
      }
    }
  }

  /// On the loop, after ``merge(_:generation:answering:)``: the drain, the next poll, and
  /// the end of a feed stream whose trip ended (the server closes it too).
  func applied(_ merged: Merged, generation: UInt64) {
    if merged.drain { lane.scheduler.drainAtEndOfTick(self) }
    if let next = merged.next { lane.scheduler.schedule(self, generation: generation, at: next) }
    merged.ended?.cancel()
  }

  /// On the loop: a failed call (or token fetch): reported, the refused token dropped, the
  /// retry scheduled.
  func failed(_ failure: PollFailure, generation: UInt64) {
    let random = Double.random(in: 0..<1)
    let now = MonotonicInstant.now
    onLoop.value.clearCall(of: generation)
    let (action, drain, next, waitsForNetwork) = protected.withLock {
      state -> (TripFollower.OnFailure, Bool, MonotonicInstant?, Bool) in
      let action = state.follower.failed(
        failure.error, generation: generation, tokenFetchFailed: failure.token == nil,
        random: random, now: now.nanoseconds)
      switch action {
      case .report(let error, _, let retryIn):
        // The scheduler may start a poll up to its coalescing window early; a server's
        // RetryInfo is a floor, so the retry it asked for is due that much later.
        let due =
          error.retryDelay == nil
          ? now.advanced(by: retryIn)
          : now.advanced(by: retryIn + .nanoseconds(Int64(lane.scheduler.coalescingWindow)))
        return (
          action, enqueue([.updateFailed(error)], &state),
          scheduleNext(generation, at: due, &state),
          state.follower.waitsForNetwork(generation: generation)
        )
      case .ignore: return (action, false, nil, false)
      }
    }
    if drain { lane.scheduler.drainAtEndOfTick(self) }
    // A network failure: the retry comes early if the connection is back before it.
    if waitsForNetwork { lane.wakeWhenReady(self, generation: generation) }
    guard case .report(let error, let dropToken, let retryIn) = action, let next else { return }
    core.metrics.failed(error.category)
    core.logger.log(
      level: failure.token == nil ? .warning : .info,
      failure.token == nil ? "access token fetch failed" : "trip update failed",
      metadata: [
        "fleet.trip": "\(tripName)", "grpc.status": "\(error.code)",
        "fleet.category": "\(error.category)", "fleet.retry_in": "\(retryIn)",
        "fleet.error": "\(error.message)",
      ])
    if dropToken, let token = failure.token {
      core.tokens.invalidate(token, for: tripName.tripID)
      // The next poll must not reuse it from the template either.
      if onLoop.value.pollTemplate?.token == token { onLoop.value.pollTemplate = nil }
    }
    lane.scheduler.schedule(self, generation: generation, at: next)
  }

  /// On the loop: a feed stream ended: OK (the server closed it early) reconnects after the
  /// poll interval, UNIMPLEMENTED switches the service to polling at once and silently, and
  /// any other error is a failure like a poll's.
  func watchEnded(_ error: RPCError?, token: AccessToken, generation: UInt64) {
    if let error, error.code != .unimplemented {
      failed(PollFailure(error: error, token: token), generation: generation)
      return
    }
    if error != nil { core.markFeedUnimplemented() }
    onLoop.value.clearCall(of: generation)
    let next = protected.withLock { state -> MonotonicInstant? in
      let delay =
        error == nil
        ? state.follower.watchEnded(generation: generation)
        : state.follower.feedUnimplemented(generation: generation)
      return delay.map { scheduleNext(generation, after: $0, &state) }
    }
    if let next { lane.scheduler.schedule(self, generation: generation, at: next) }
  }

  /// A feed stream's receiver: merges each update into its model and hands the end to it, on
}
