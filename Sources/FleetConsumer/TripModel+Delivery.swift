extension TripModel {
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
    guard !state.draining else { return false }
    state.draining = true
    return true
  }

  /// Outside the lock: runs ``drain()`` on the callback executor.
  func scheduleDrain() {
    core.schedule { [self] in drain() }
  }

  /// Delivers queued events in order until none is left; runs on the callback executor.
  /// Only one drain runs at a time per model (the `draining` flag), which is what makes
  /// callbacks ordered and never concurrent whatever the executor.
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
      // Every queued event at once, and the subscribers as they are now.
      let more = protected.withLock { state -> Bool in
        guard !state.pending.isEmpty else {
          state.draining = false
          return false
        }
        swap(&events, &state.pending)
        registrations = state.subscribers
        seen = membership.load(ordering: .relaxed)
        return true
      }
      guard more else { return }
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
