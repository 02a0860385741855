import Foundation
import Synchronization

/// Runs one phase: `concurrency` workers and a controller that ends the phase at its deadline
/// or on an interruption, then winds the workers down.
///
/// Winding down: message workloads are cancelled at once (messages after the stop do not
/// count); calls of rpc workloads in flight may finish for `grace`, then are cancelled.
struct LoadRunner: Sendable {
  let workload: Workload
  let workers: LoadWorkers
  let concurrency: Int
  let interruption: Interruption
  let progress: ProgressBar?
  /// How long calls in flight may finish once the phase is over.
  var grace: Duration = .seconds(1)

  /// What one phase measured.
  struct Outcome {
    var tally: LatencyRecorder.Tally
    var elapsed: Duration
  }

  private enum Event {
    case workerDone, stopped, graceOver
  }

  func run(_ phase: LoadPhase, label: String) async -> Outcome {
    let recorder = LatencyRecorder(workers: concurrency)
    await withTaskGroup(of: Event.self) { group in
      for worker in 0..<concurrency {
        group.addTask {
          var log = recorder.log(for: worker)
          await workers.run(workload, worker: worker, phase: phase, log: &log)
          log.flush()
          return .workerDone
        }
      }
      group.addTask {
        await control(phase, label: label)
        return .stopped
      }
      var working = concurrency
      while let event = await group.next() {
        switch event {
        case .workerDone:
          working -= 1
          if working == 0 {
            phase.stop()
            group.cancelAll()
          }
        case .stopped:
          if workload.unit == .message {
            group.cancelAll()
          } else {
            group.addTask {
              try? await Task.sleep(for: grace)
              return .graceOver
            }
          }
        case .graceOver:
          group.cancelAll()
        }
      }
    }
    progress?.clear()
    return Outcome(tally: recorder.tally(), elapsed: .now - phase.start)
  }

  private func control(_ phase: LoadPhase, label: String) async {
    await PhaseWatch.untilOver(phase, interruption: interruption, progress: progress, label: label)
  }
}

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
      let thread = Thread {
        var ticks = 0
        while true {
          if interruption.happened { phase.stop() }
          if let deadline = phase.deadline, ContinuousClock.now >= deadline { phase.stop() }
          if phase.isStopped { break }
          // Redrawn ten times a second.
          if ticks % 5 == 0 { progress?.show(label, phase) }
          ticks += 1
          var tick = Duration.milliseconds(20)
          if let deadline = phase.deadline { tick = min(tick, deadline - .now) }
          let micros = max(tick.components.attoseconds / 1_000_000_000_000, 100)
          usleep(UInt32(tick.components.seconds > 0 ? 20_000 : micros))
        }
        over.resume()
      }
      thread.name = "fleet-load-watch"
      thread.start()
    }
  }
}

/// Set once SIGINT or SIGTERM arrived: the run stops issuing calls and reports what it has.
final class Interruption: Sendable {
  private let flag = Atomic<Bool>(false)
  var happened: Bool { flag.load(ordering: .relaxed) }
  func signal() { flag.store(true, ordering: .relaxed) }
}
