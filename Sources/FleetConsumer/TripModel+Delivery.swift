extension TripModel {
  /// Inside the lock: queues `events` for the subscribers; returns whether the caller must
  /// schedule a drain job (none is scheduled or running).
  func enqueue(_ events: [TripModelEvent], _ state: inout Protected) -> Bool {
    guard !events.isEmpty else { return false }
    state.pending.append(contentsOf: events)
    guard !state.draining else { return false }
    state.draining = true
    return true
  }

  /// Outside the lock: runs ``drain()`` on the callback executor.
  func scheduleDrain() {
    core.schedule { [self] in drain() }
  }

  /// Delivers queued events in order until none is left; runs on the callback executor. Only one drain runs at a time per
  /// model (the `draining` flag), which is what makes callbacks ordered and never concurrent
  /// whatever the executor.
  ///
  /// Registration is checked again right before each callback, under the lock, so a
  /// subscriber that unregisters (even from inside a callback) gets nothing after that; the
  /// callback itself runs with no lock held.
  func drain() {
    while true {
      let next = protected.withLock { state -> (TripModelEvent, [Registration])? in
        guard state.pendingHead < state.pending.count else {
          // Keeping the capacity: a poll queues a handful of events a second, and growing
          // the array from nothing each time cost two allocations per update.
          state.pending.removeAll(keepingCapacity: true)
          state.pendingHead = 0
          state.draining = false
          return nil
        }
        let event = state.pending[state.pendingHead]
        state.pendingHead += 1
        return (event, state.subscribers)
      }
      guard let (event, registrations) = next else { return }
      for registration in registrations {
        let stillRegistered = protected.withLock { state in
          state.subscribers.contains { $0.id == registration.id }
        }
        guard stillRegistered else { continue }
        deliver(event, to: registration.target)
      }
    }
  }

  private func deliver(_ event: TripModelEvent, to target: Registration.Target) {
    switch target {
    case .subscriber(let box):
      box.subscriber?.receive(event, from: self)
    case .stream(let continuation):
      continuation.yield(event)
      // The terminal update ends with this; the sequence ends with it.
      if event == .stateChanged(.inactive) { continuation.finish() }
    }
  }
}
