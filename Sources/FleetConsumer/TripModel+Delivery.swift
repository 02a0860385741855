extension TripModel {
  /// The values of ``TripModel/drainState``.
  enum DrainState {
    /// No drain job is scheduled or running.
    static let idle: UInt8 = 0
    /// A drain job runs, and has taken every event queued.
    static let draining: UInt8 = 1
    /// A drain job is scheduled, or runs and has events still to take.
    static let queued: UInt8 = 2
  }

  /// Inside the lock: queues `events` for the subscribers; returns whether the caller must
  /// schedule a drain job (none is scheduled or running).
  func enqueue(_ events: [TripModelEvent], _ state: inout Protected) -> Bool {
    guard !events.isEmpty else { return false }
    // Usually nothing is pending (the last update was delivered long ago): the array is
    // taken as it is, not copied into another.
    if state.pending.isEmpty {
      state.pending = events
    } else {
      state.pending.append(contentsOf: events)
    }
    // Marked after the events are queued, so a drain that sees `queued` finds them.
    return drainState.exchange(DrainState.queued, ordering: .acquiringAndReleasing)
      == DrainState.idle
  }

  /// Outside the lock: runs ``drain()`` on the callback executor.
  func scheduleDrain() {
    core.schedule { [self] in drain() }
  }

  /// Delivers queued events in order until none is left; runs on the callback executor.
  /// Only one drain runs at a time per model (``drainState``: a drain job is scheduled only
  /// by the enqueue that finds it idle, and only a drain sets it idle again), which is what
  /// makes callbacks ordered and never concurrent whatever the executor. Once it has
  /// delivered, the drain ends with one compare-and-exchange when nothing was queued
  /// meanwhile: one hold of the lock per drain, not two.
  ///
  /// Registration is checked again right before each callback, so a subscriber that
  /// unregisters (even from inside a callback) gets nothing after that: `membership` is
  /// bumped inside the lock before `unregisterSubscriber` returns, and a changed value sends
  /// the drain back to the lock for the current subscribers. The callback itself runs with
  /// no lock held.
  func drain() {
    var events: [TripModelEvent] = []
    var registrations: [Registration] = []
    var seen: UInt64 = 0
    while true {
      // Events queued from here on mark the state `queued` again: the drain goes round once
      // more, rather than end with them undelivered.
      drainState.store(DrainState.draining, ordering: .releasing)
      // Every queued event at once, and the subscribers as they are now.
      protected.withLock { state in
        swap(&events, &state.pending)
        registrations = state.subscribers
        seen = membership.load(ordering: .relaxed)
      }
      for event in events {
        let isRefresh: Bool
        if case .refreshed = event { isRefresh = true } else { isRefresh = false }
        // Whether `registrations` was looked at again while this event's loop goes over the
        // earlier snapshot: each later one of it is then checked against the new list.
        var reloaded = false
        for registration in registrations where !isRefresh || registration.receivesRefreshes {
          // A subscriber that arrived or left since the snapshot: look again, under the lock.
          // Otherwise the snapshot is still true, and neither a lock nor a search is made per
          // callback.
          if membership.load(ordering: .acquiring) != seen {
            protected.withLock { state in
              registrations = state.subscribers
              seen = membership.load(ordering: .relaxed)
            }
            reloaded = true
          }
          if reloaded {
            guard registrations.contains(where: { $0.id == registration.id }) else { continue }
          }
          deliver(event, to: registration.target)
        }
        // The terminal update has reached everyone: the trip's end is known.
        if case .stateChanged(.inactive) = event { completionDelivered() }
      }
      events.removeAll()
      // Nothing queued since the events were taken: done. An enqueue after this finds the
      // state idle and schedules the next drain.
      if drainState.compareExchange(
        expected: DrainState.draining, desired: DrainState.idle, ordering: .acquiringAndReleasing
      ).exchanged {
        return
      }
    }
  }

  /// Resumes the ``TripModel/completion`` waiters with the final trip.
  private func completionDelivered() {
    protected.withLock { state in
      state.finalDelivered = true
      guard let trip = state.follower.trip else { return }
      for waiter in state.completionWaiters.values { waiter.resume(returning: .success(trip)) }
      state.completionWaiters = [:]
    }
  }

  private func deliver(_ event: TripModelEvent, to target: Registration.Target) {
    switch target {
    case .subscriber(let box):
      box.subscriber?.receive(event, from: self)
    case .stream(let continuation):
      continuation.yield(event)
      // The terminal update ends with this; the sequence ends with it.
      if case .stateChanged(.inactive) = event { continuation.finish() }
    }
  }
}
