// The loop's timers and end-of-tick hooks: public, for code the loop owns (a poller of many
// resources, loop-driven calls), and what the transport's deadlines, keepalive and flushes use.

extension EventLoop {
  /// Runs `body` on the loop at `deadline` (monotonic; at the next tick when it has passed);
  /// cancel with ``cancelTimer(_:)``. Loop only: stops the process when called off the loop
  /// thread (``preconditionInEventLoop(_:file:line:)``).
  ///
  /// One timer heap serves the loop: arming and cancelling cost O(log n) in the timers
  /// pending, so code that keeps many deadlines (a poller of many resources) may arm one per
  /// resource, or one for its earliest deadline.
  public func scheduleTimer(at deadline: MonotonicInstant, _ body: @escaping () -> Void) -> TimerID {
    preconditionInEventLoop("EventLoop.scheduleTimer(at:_:)")
    return timers.insert(deadline, body)
  }

  /// Calls `target.timerFired()` on the loop at `deadline`, holding `target` until then;
  /// cancel with ``cancelTimer(_:)``. Unlike a closure, costs no allocation. Loop only.
  public func scheduleTimer(at deadline: MonotonicInstant, target: any TimerTarget) -> TimerID {
    preconditionInEventLoop("EventLoop.scheduleTimer(at:target:)")
    return timers.insert(deadline, .target(target))
  }

  /// Cancels the timer `id` names, dropping its body (and what it captured) at once; a timer
  /// that has fired or was cancelled already is ignored. Loop only.
  public func cancelTimer(_ id: TimerID) {
    preconditionInEventLoop("EventLoop.cancelTimer(_:)")
    timers.cancel(id)
  }

  /// Calls `handler.tickEnded()` once, when the loop has finished its current step (one
  /// ready socket and the tasks it started, or the tick's due timers and queued work):
  /// connections flush their output there, so the frames of a step go out in one write.
  /// Code that collects work during a step (callbacks to hand to another thread) batches it
  /// there: one hand-over per step, not one per event. A poll runs ``EventLoop/flushRounds``
  /// rounds of these calls at most; the rest run after the next poll, which does not sleep.
  /// Loop only.
  public func runAtEndOfTick(_ handler: any TickEndHandler) {
    preconditionInEventLoop("EventLoop.runAtEndOfTick(_:)")
    tickEnd.append(handler)
  }
}

/// Something that wants a call once the loop's current tick is done
/// (``EventLoop/runAtEndOfTick(_:)``).
public protocol TickEndHandler: AnyObject {
  /// The step is over; runs on the loop, once per ``EventLoop/runAtEndOfTick(_:)``.
  func tickEnded()
}
