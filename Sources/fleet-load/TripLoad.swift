import FleetConsumer
import FleetSync
import Foundation

/// `--trips N`: N trips followed at once through the public `TripService`/`TripModel` API,
/// one subscriber each, polling or through the trip feed.
///
/// Following starts staggered over the first poll interval (as trips of a real service are
/// not in step), inside the warm-up; the measured phase then counts updates for `-z`
/// seconds (or `-n` updates). Memory is measured from a baseline taken before the service
/// exists.
struct TripLoad {
  let configuration: TripService.Configuration
  let names: [String]
  let warmup: Double
  let stop: LoadOptions.Stop
  let interruption: Interruption
  let progress: ProgressBar?

  /// What the run measured, for the report.
  struct Result {
    var measured: LoadReport.Measured
    var trips: LoadReport.Trips
  }

  func run() async throws -> Result {
    let baselineRSS = ProcessUsage.currentRSSBytes()
    let service = try TripService(configuration: configuration)
    let counter = UpdateCounter()
    var models: [TripModel] = []
    models.reserveCapacity(names.count)
    for name in names { models.append(try service.tripModel(forTripName: name)) }

    let clock = ContinuousClock()
    let warmupStart = clock.now
    let warmupPhase = LoadPhase(
      start: warmupStart, deadline: warmupStart + .seconds(warmup), limit: nil, rate: nil)
    counter.begin(warmupPhase)
    // Stagger the first polls over one poll interval.
    let spread = min(configuration.options.pollInterval, .seconds(max(warmup, 0.001)))
    for (index, model) in models.enumerated() {
      let due = warmupStart + spread * (Double(index) / Double(models.count))
      if due > clock.now { try? await Task.sleep(until: due, clock: clock) }
      model.register(counter)
    }
    await wait(warmupPhase, label: "warm-up")
    let warmupCount = counter.measuredCount()

    var measured = LoadPhase.nothingMeasured(warmupCount: warmupCount)
    if !interruption.happened {
      let phase = LoadPhase(stop, rate: nil)
      measured.before = ProcessUsage.now()
      counter.begin(phase)
      await wait(phase, label: "following")
      measured.tally = counter.end()
      measured.units = measured.tally.codes["OK"] ?? 0
      measured.elapsed = clock.now - phase.start
      measured.after = ProcessUsage.now()
      measured.partial = interruption.happened
    }
    for model in models { model.unregisterSubscriber(counter) }
    service.shutdown()

    let cpu =
      (measured.after.userSeconds - measured.before.userSeconds)
      + (measured.after.systemSeconds - measured.before.systemSeconds)
    let seconds = ProgressBar.seconds(measured.elapsed)
    let count = measured.units ?? 0
    let failures = measured.tally.codes.filter { $0.key != "OK" }.values.reduce(0, +)
    let options = configuration.options
    let trips = LoadReport.Trips(
      followed: names.count, mode: options.followsTripFeed ? "stream" : "poll",
      pollIntervalSeconds: options.followsTripFeed
        ? nil : ProgressBar.seconds(options.pollInterval),
      updatesPerSecond: seconds > 0 ? Double(count) / seconds : 0,
      callbackLatencyMicroseconds: LoadReport.latency(measured.tally.histogram),
      errors: failures, completedTrips: counter.completedTrips,
      cpuCores: seconds > 0 ? cpu / seconds : 0, baselineRSSBytes: baselineRSS,
      peakRSSBytesPerTrip: Double(max(measured.after.peakRSSBytes - baselineRSS, 0))
        / Double(names.count))
    return Result(measured: measured, trips: trips)
  }

  /// Returns when `phase` is over: at its deadline, its count, or an interruption.
  private func wait(_ phase: LoadPhase, label: String) async {
    await PhaseWatch.untilOver(phase, interruption: interruption, progress: progress, label: label)
    progress?.clear()
  }
}

/// The one subscriber of every followed trip: counts updates and failures of the current
/// phase and records each update's callback latency.
final class UpdateCounter: TripModelSubscriber {
  private struct State {
    var phase: LoadPhase?
    var tally = LatencyRecorder.Tally()
    var completedTrips = 0
  }

  private let state = PosixMutex(State())

  /// Starts counting for `phase`, forgetting what was counted before.
  func begin(_ phase: LoadPhase) {
    state.withLock {
      $0.phase = phase
      $0.tally = LatencyRecorder.Tally()
    }
  }

  /// Stops counting; returns what the phase counted.
  func end() -> LatencyRecorder.Tally {
    state.withLock {
      $0.phase = nil
      return $0.tally
    }
  }

  /// Updates counted in the current phase so far.
  func measuredCount() -> Int { state.withLock { $0.tally.codes["OK"] ?? 0 } }

  var completedTrips: Int { state.withLock { $0.completedTrips } }

  func tripModel(
    _ model: TripModel, didUpdate trip: FleetEngine.Trip,
    updatedPropertyFields: TripModelUpdatedPropertyFields
  ) {
    let now = Int64((Date().timeIntervalSince1970 * 1e9).rounded())
    var latency: UInt64?
    if let stamp = trip.lastLocation?.serverTime {
      let stamped = stamp.seconds * 1_000_000_000 + Int64(stamp.nanos)
      latency = UInt64(max(now - stamped, 0))
    }
    state.withLock { state in
      guard let phase = state.phase, phase.completed() else { return }
      state.tally.codes["OK", default: 0] += 1
      // An update without a location stamp counts, but has no latency to show.
      if let latency {
        _ = state.tally.histogram.record(min(latency, LatencyRecorder.highestTrackable))
      }
    }
  }

  func tripModel(_ model: TripModel, didUpdateTripStatus status: FleetEngine.TripStatus) {
    guard status.isTerminal else { return }
    state.withLock { $0.completedTrips += 1 }
  }

  func tripModel(_ model: TripModel, didFailUpdateTripWithError error: RPCError) {
    state.withLock { state in
      guard let phase = state.phase, !phase.isStopped else { return }
      state.tally.codes[error.code.name, default: 0] += 1
      state.tally.errors[error.message, default: 0] += 1
    }
  }
}
