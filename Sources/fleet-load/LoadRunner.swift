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
  /// Where the workers run: the channels' event loop, so a call starts and completes with
  /// no thread hop; nil: the global executor.
  let executor: (any TaskExecutor)?
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
        group.addTask(executorPreference: executor) {
          var log = recorder.log(for: worker)
          await workers.run(workload, worker: worker, phase: phase, log: &log)
          log.flush()
          return .workerDone
        }
      }
      group.addTask {
        await PhaseWatch.untilOver(
          phase, interruption: interruption, progress: progress, label: label)
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
          phase.halt()
          group.cancelAll()
        }
      }
    }
    progress?.clear()
    return Outcome(tally: recorder.tally(), elapsed: phase.elapsed)
  }
}
