public import FoundationEssentials
internal import GRPCWire

// What a caller can do to a model besides subscribing: its own options, an immediate poll,
// when it last heard from the server, and waiting for the end of the trip.

extension TripModel {
  /// This model's options; setting them takes effect at once. A new poll interval moves the
  /// poll that is waiting to one new interval after the previous poll was due (at once if
  /// that has passed); a call in flight, or a retry after a failure, keeps its time, and the
  /// interval applies from its answer on.
  public var options: TripModelOptions {
    get {
      protected.withLock { state in
        (try? TripModelOptions(pollInterval: state.follower.intervalOverride))
          ?? TripModelOptions()
      }
    }
    set {
      let now = MonotonicInstant.now.nanoseconds
      let moved = protected.withLock { state in
        state.follower.setPollInterval(newValue.pollInterval, now: now)
      }
      if case .pollNow(let generation, let due) = moved {
        lane.scheduler.schedule(self, generation: generation, at: MonotonicInstant(nanoseconds: due))
      }
    }
  }

  /// Polls now instead of when the next poll is due (JavaScript's `refresh()`); the poll
  /// after it is due one interval later. While a call is in flight this does nothing: its
  /// answer is the refresh, so two calls are never sent for one. Does nothing either when
  /// the model is not following, or follows through the trip feed (whose stream is always
  /// in flight).
  public func refresh() {
    let now = MonotonicInstant.now.nanoseconds
    let action = protected.withLock { $0.follower.refresh(now: now) }
    if case .pollNow(let generation, let due) = action {
      lane.scheduler.schedule(self, generation: generation, at: MonotonicInstant(nanoseconds: due))
    }
  }

  /// On the loop: the lane's channel has a ready connection again; loop `generation`, if it
  /// is backing off after a network failure, calls now rather than when its backoff ends.
  func channelReady(generation: UInt64) {
    let now = MonotonicInstant.now.nanoseconds
    let action = protected.withLock { $0.follower.channelReady(generation: generation, now: now) }
    if case .pollNow(let generation, let due) = action {
      lane.scheduler.schedule(self, generation: generation, at: MonotonicInstant(nanoseconds: due))
    }
  }

  /// When the last successful response arrived (a poll's answer or a feed update), changed
  /// or not; nil before the first. A subscriber that wants to hear of each one sets
  /// ``TripModelSubscriber/receivesRefreshes``.
  public var lastRefreshed: Date? {
    protected.withLock { $0.lastRefreshed }
  }

  /// The final trip, once its terminal status (COMPLETE, CANCELED) has been delivered to the
  /// subscribers; at once if it already has been.
  ///
  /// Throws CANCELLED when following stops before that (the last subscriber left, the
  /// service shut down) or the awaiting task is cancelled, and FAILED_PRECONDITION when the
  /// model is not following (register a subscriber first).
  public var completion: FleetEngine.Trip {
    get async throws(RPCError) {
      let id = protected.withLock { state in
        state.nextWaiterID += 1
        return state.nextWaiterID
      }
      let result = await withTaskCancellationHandler {
        await withCheckedContinuation {
          (continuation: CheckedContinuation<Result<FleetEngine.Trip, RPCError>, Never>) in
          let now = protected.withLock { state -> Result<FleetEngine.Trip, RPCError>? in
            if Task.isCancelled { return .failure(Self.waitCancelled) }
            switch state.follower.state {
            case .finished where state.finalDelivered:
              return state.follower.trip.map { .success($0) } ?? .failure(Self.waitCancelled)
            case .finished, .following:
              state.completionWaiters[id] = continuation
              return nil
            case .inactive:
              return .failure(
                RPCError(
                  code: .failedPrecondition,
                  message: "\(tripName) is not being followed: register a subscriber first"))
            }
          }
          if let now { continuation.resume(returning: now) }
        }
      } onCancel: {
        let waiter = protected.withLock { $0.completionWaiters.removeValue(forKey: id) }
        waiter?.resume(returning: .failure(Self.waitCancelled))
      }
      return try result.get()
    }
  }

  private static var waitCancelled: RPCError {
    RPCError(code: .cancelled, message: "the wait for the trip's end was cancelled")
  }

  /// Inside the lock: notes a good response and, when anyone listens, adds its
  /// ``TripModelEvent/refreshed(_:)`` to `events`.
  func refreshed(_ events: inout [TripModelEvent], _ state: inout Protected) {
    let now = Date()
    state.lastRefreshed = now
    if state.refreshSubscribers > 0 { events.append(.refreshed(now)) }
  }
}
