import GRPCWire
import Testing

@testable import fleet_load

/// When a phase ends: the instant it is stopped, whatever the watch thread is doing.
@Suite("fleet-load phase", .timeLimit(.minutes(1)))
struct LoadPhaseTests {
  /// A runner with no workers: the test itself completes the phase's units, so it knows the
  /// instant the phase stopped.
  private func runner() -> LoadRunner {
    let workers = LoadWorkers(
      channels: [], options: CallOptions(), tripNames: [], concurrency: 0, requestSize: 0,
      responseSize: 0, streamMessages: 0)
    return LoadRunner(
      workload: .watchTrip, workers: workers, concurrency: 0, interruption: Interruption(),
      progress: nil, executor: nil)
  }

  @Test("a -n phase's elapsed time ends when its last unit stops it, not when the watch wakes")
  func elapsedEndsAtTheStop() async {
    let phase = LoadPhase(.count(3), rate: nil)
    async let outcome = runner().run(phase, label: "measured")
    for _ in 0..<3 { phase.completed() }
    // The watch thread notices the stop on its next look (up to 100 ms later); the runner
    // returns after that. Its elapsed time must not include the wait.
    let stopReturned = ContinuousClock.now - phase.start
    let elapsed = await outcome.elapsed
    #expect(phase.isStopped)
    #expect(elapsed <= stopReturned)
  }

  @Test("the first stop stands: stopping again, or reading later, does not move the end")
  func firstStopStands() {
    let phase = LoadPhase(.duration(.seconds(60)), rate: nil)
    let before = phase.elapsed
    phase.stop()
    let stopReturned = ContinuousClock.now - phase.start
    let first = phase.elapsed
    #expect(before <= first && first <= stopReturned)
    phase.stop()
    phase.halt()
    #expect(phase.elapsed == first)
  }
}
