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
    /// TCP connections to the target at the end of the measured phase.
    var connections: Int
  }

  func run() async throws -> Result {
    let baselineRSS = ProcessUsage.currentRSSBytes()
    let service = try TripService(configuration: configuration)
    let counter = UpdateCounter()
    var models: [TripModel] = []
    models.reserveCapacity(names.count)

    let clock = ContinuousClock()
    let warmupStart = clock.now
    let warmupPhase = LoadPhase(
      start: warmupStart, deadline: warmupStart + .seconds(warmup), limit: nil, rate: nil)
    counter.begin(warmupPhase)
    // Stagger the first polls over one poll interval. Each model is made when it is first
    // followed, as an application would make it: TripService gives it its event loop then.
    let spread = min(configuration.options.pollInterval, .seconds(max(warmup, 0.001)))
    for (index, name) in names.enumerated() {
      let due = warmupStart + spread * (Double(index) / Double(names.count))
      if due > clock.now { try? await Task.sleep(until: due, clock: clock) }
      let model = try service.tripModel(forTripName: name)
      models.append(model)
      model.register(counter)
    }
    await wait(warmupPhase, label: "warm-up")
    let warmupCount = counter.measuredCount()

    var connections = OpenConnections.count(toPort: configuration.endpoint.port)
    var measured = LoadPhase.nothingMeasured(warmupCount: warmupCount)
    if !interruption.happened {
      let phase = LoadPhase(stop, rate: nil)
      measured.before = ProcessUsage.now()
      counter.begin(phase)
      await wait(phase, label: "following")
      measured.tally = counter.end()
      measured.units = measured.tally.codes["OK"] ?? 0
      measured.elapsed = phase.elapsed
      measured.after = ProcessUsage.now()
      connections = OpenConnections.count(toPort: configuration.endpoint.port)
      measured.partial = interruption.happened
    }
    for model in models { model.unregisterSubscriber(counter) }
    service.shutdown()

    let cpu = measured.userSeconds + measured.systemSeconds
    let seconds = ProgressBar.seconds(measured.elapsed)
    let count = measured.units ?? 0
    let failures = measured.tally.codes.filter { $0.key != "OK" }.values.reduce(0, +)
    let options = configuration.options
    let trips = LoadReport.Trips(
      followed: names.count, mode: options.followsTripFeed ? "stream" : "poll",
      pollIntervalSeconds: options.followsTripFeed
        ? nil : ProgressBar.seconds(options.pollInterval),
      updatesPerSecond: seconds > 0 ? Double(count) / seconds : 0,
      callbackLatencyMicroseconds: LoadReport.latency(measured.tally),
      errors: failures, completedTrips: counter.completedTrips,
      tripsUpdated: counter.tripsUpdated,
      cpuCores: seconds > 0 ? cpu / seconds : 0, baselineRSSBytes: baselineRSS,
      peakRSSBytesPerTrip: Double(max(measured.after.peakRSSBytes - baselineRSS, 0))
        / Double(names.count))
    return Result(measured: measured, trips: trips, connections: connections)
  }

  /// Returns when `phase` is over: at its deadline, its count, or an interruption.
  private func wait(_ phase: LoadPhase, label: String) async {
    await PhaseWatch.untilOver(phase, interruption: interruption, progress: progress, label: label)
    progress?.clear()
  }
}
