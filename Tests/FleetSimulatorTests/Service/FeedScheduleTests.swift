import Testing

@testable import FleetSimulator

/// When a `WatchTrip` stream looks at its trip again, as pure functions of the plan.
@Suite("Feed schedule")
struct FeedScheduleTests {
  let core = SimulatorCore(options: fastOptions())

  func record(_ core: SimulatorCore) throws -> TripRecord {
    try core.makeRecord(
      try TripName(parsing: "providers/p/trips/t"), fastTrip(), now: 1_700_000_000_000_000_000)
  }

  /// The trip rendered at simulated time `time`, less the fields that tell the time (the
  /// remaining durations, the location's timestamps), which change on every look.
  func seen(_ record: TripRecord, at time: Double) -> FleetEngine.Trip {
    var trip = core.renderer.render(
      record, at: core.clock.wallTime(at: time, createdAt: record.createdAt),
      simulatedTime: time, options: .full)
    trip.remainingTimeToFirstWaypoint = nil
    trip.lastLocation?.updateTime = nil
    trip.lastLocation?.serverTime = nil
    for index in trip.remainingWaypoints.indices {
      trip.remainingWaypoints[index].duration = nil
    }
    return trip
  }

  func schedule(_ core: SimulatorCore) -> FeedSchedule {
    FeedSchedule(renderer: core.renderer, interval: core.options.feedInterval)
  }

  @Test("a standing trip looks the same until the renderer's next change, and not at it")
  func standingUntilNextChange() throws {
    let record = try record(core)
    let plan = record.plan
    // NEW, waiting at the pickup, waiting at the intermediate destination.
    for start in [0, 25, plan.arrival(atStop: 1) + 1, plan.arrival(atStop: 2) + 30] {
      let state = record.state(atSimulatedTime: start)
      #expect(!state.isMoving)
      let next = core.renderer.nextChange(of: state)
      #expect(next > start && next <= state.phaseEnd)
      let before = seen(record, at: start)
      for step in 1...10 {
        let time = start + (next - start) * Double(step) / 11
        #expect(seen(record, at: time) == before, "at \(time), standing since \(start)")
      }
      #expect(seen(record, at: next) != before, "at \(next), standing since \(start)")
    }
  }

  @Test("a standing trip is due at its next change, however far off")
  func standingDue() throws {
    let record = try record(core)
    let state = record.state(atSimulatedTime: 1)
    let wall = core.clock.wallTime(at: 1, createdAt: record.createdAt)
    let due = schedule(core).due(after: state, createdAt: record.createdAt, renderedAt: wall)
    #expect(due == core.clock.wallTime(at: state.phaseEnd, createdAt: record.createdAt))
  }

  @Test("a moving trip is due a feed interval after the look, or at its phase's end if sooner")
  func movingDue() throws {
    let record = try record(core)
    let plan = record.plan
    let interval = Int64(50_000_000)  // fastOptions' feedInterval
    let departure = plan.departure(onLeg: 0)
    let arrival = plan.arrival(atStop: 1)
    for (time, expected) in [
      (departure + 1, nil), (arrival - 1, core.clock.wallTime(at: arrival, createdAt: 0)),
    ] as [(Double, Int64?)] {
      let state = record.state(atSimulatedTime: time)
      #expect(state.isMoving)
      let wall = core.clock.wallTime(at: time, createdAt: record.createdAt)
      let due = schedule(core).due(after: state, createdAt: record.createdAt, renderedAt: wall)
      #expect(due == (expected.map { $0 + record.createdAt } ?? wall + interval), "at \(time)")
    }
  }

  @Test("an ended trip is never due")
  func endedNeverDue() throws {
    let record = try record(core)
    let state = record.state(atSimulatedTime: record.plan.completion + 1)
    #expect(state.phase == .complete)
    #expect(schedule(core).due(after: state, createdAt: record.createdAt, renderedAt: 0) == .max)
  }

  @Test("a change that rounding puts at the look itself is due after it, not again at once")
  func neverAtTheLook() throws {
    let record = try record(core)
    let state = record.state(atSimulatedTime: 10)
    let atEnd = core.clock.wallTime(at: state.phaseEnd, createdAt: record.createdAt)
    let due = schedule(core).due(after: state, createdAt: record.createdAt, renderedAt: atEnd)
    #expect(due == atEnd + 1)
  }

  @Test("with a stepped clock every step is due, standing or moving, and only steps")
  func stepped() throws {
    var options = fastOptions(timeScale: 60)
    options.clockStep = .seconds(1)
    options.feedInterval = .milliseconds(500)
    let core = SimulatorCore(options: options)
    let record = try record(core)
    let step = Int64(1_000_000_000)
    for time in [1, record.plan.departure(onLeg: 0) + 3] {
      let state = record.state(atSimulatedTime: time)
      let look = core.clock.wallTime(at: time, createdAt: record.createdAt) / step * step
      let due = schedule(core).due(after: state, createdAt: record.createdAt, renderedAt: look)
      #expect(due == look + step, "at \(time)")
    }
  }
}
