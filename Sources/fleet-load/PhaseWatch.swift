import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Watches a phase from a thread of its own and returns once it is over: stopped by a
/// worker, past its deadline, or interrupted (which it then stops). It also draws the
/// progress bar.
///
/// Not a task: workers reading buffered stream messages need not suspend, and can keep both
/// threads of the cooperative pool busy until the phase's flag tells them to stop.
enum PhaseWatch {
  static func untilOver(
    _ phase: LoadPhase, interruption: Interruption, progress: ProgressBar?, label: String
  ) async {
    await withCheckedContinuation { (over: CheckedContinuation<Void, Never>) in
      // With a progress bar, a look every 20 ms (redrawn ten times a second); without one, every
      // 100 ms, the deadline still kept to the tick: the figures of a run include this
      // thread's wake-ups, and each costs a context switch.
      let period = progress == nil ? Duration.milliseconds(100) : .milliseconds(20)
      let thread = Thread {
        var ticks = 0
        while true {
          if interruption.happened { phase.halt() }
          if let deadline = phase.deadline, ContinuousClock.now >= deadline { phase.stop() }
          if phase.isStopped { break }
          if ticks % 5 == 0 { progress?.show(label, phase) }
          ticks += 1
          var tick = period
          if let deadline = phase.deadline { tick = min(tick, deadline - .now) }
          // tick ≤ period < 1 s: its attoseconds are all of it.
          usleep(UInt32(max(tick.components.attoseconds / 1_000_000_000_000, 100)))
        }
        over.resume()
      }
      thread.name = "fleet-load-watch"
      thread.start()
    }
  }
}
