internal import FleetSync

/// One stream's wait for news of its trip: it ends when ``TripStore`` changes or removes the
/// trip's record, at a deadline the stream chose (on the store's ``WatchTimer``, up to a tick
/// late), or when the stream's task is cancelled.
///
/// A change that comes while nobody waits is kept for the next wait, so a change made between
/// reading the record and starting to wait is not missed. A wait may therefore end for a
/// change the waiter has already seen, or a moment before its deadline by the wall clock:
/// the waiter checks what is new before acting on it. One wait at a time.
final class TripWatch: Sendable {
  private struct State {
    var waiter: CheckedContinuation<Void, Never>?
    /// Whether a change came while nobody waited, or before the waiter was stored.
    var signalled = false
    /// The number of the wait under way (its ring from the timer counts); nil between waits.
    var waiting: UInt64?
    var waits: UInt64 = 0

    /// Ends the wait under way, or marks the next one to end at once; the waiter to resume.
    mutating func signal() -> CheckedContinuation<Void, Never>? {
      guard let waiter else {
        signalled = true
        return nil
      }
      self.waiter = nil
      waiting = nil
      return waiter
    }
  }

  private let timer: WatchTimer
  private let state = PosixMutex(State())

  init(timer: WatchTimer) {
    self.timer = timer
  }

  /// Ends the wait under way, or else the next one: the trip's record changed.
  func signal() {
    state.withLock { $0.signal() }?.resume()
  }

  /// Ends wait number `wait` if it is still under way: its deadline came.
  func ring(_ wait: UInt64) {
    state.withLock { state in state.waiting == wait ? state.signal() : nil }?.resume()
  }

  /// Returns at a signal, at `deadline` (or up to a ``WatchTimer/tick`` later), or when the
  /// calling task is cancelled (which it leaves for the caller to check), whichever comes
  /// first.
  func wait(until deadline: ContinuousClock.Instant) async {
    let wait = state.withLock { state -> UInt64? in
      precondition(state.waiting == nil && state.waiter == nil, "two waits on one TripWatch")
      if state.signalled {
        state.signalled = false
        return nil
      }
      state.waits += 1
      state.waiting = state.waits
      return state.waits
    }
    guard let wait else { return }
    timer.schedule(self, generation: wait, at: deadline)
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let signalled = state.withLock { state -> Bool in
          if state.signalled {
            state.signalled = false
            state.waiting = nil
            return true
          }
          state.waiter = continuation
          return false
        }
        if signalled { continuation.resume() }
      }
    } onCancel: {
      signal()
    }
  }
}
