internal import FleetProtos
internal import GRPCWire

/// `fleetconsumer.v1.TripFeed/WatchTrip`: streams one trip's changes until it ends.
///
/// The first update carries the whole trip (less the versioned parts the request says the
/// caller holds); after that an update goes out whenever what a caller would see changed:
/// at every status change — each one, even when the stream fell behind the simulation — at
/// each turn of the traffic period, at each UpdateTrip that changes what it shows, and every
/// ``SimulatorOptions/feedInterval`` while the vehicle moves. Fields that change on every
/// look without news (the remaining time, the location's timestamps) do not count as a
/// change, except with a stepped clock, where every step counts. After a COMPLETE or
/// CANCELED update the stream ends OK.
///
/// Between updates the stream sleeps until its trip's plan says the next change is due
/// (``FeedSchedule``) or the trip's record changes (``TripWatch``), and renders the trip only
/// then: a trip that stands still costs nothing until its next change, however long that
/// is, and a due change needs no comparison with what went out before.
struct TripFeedHandler: Sendable {
  let core: SimulatorCore

  func register(on server: GRPCServer) {
    server.register(serverStreaming: FleetFeed.TripFeed.watchTrip) { request, writer, context in
      try await watch(request, writer, context)
    }
  }

  func watch(
    _ request: FleetFeed.WatchTripRequest, _ writer: ResponseWriter<FleetFeed.TripUpdate>,
    _ context: ServerContext
  ) async throws {
    try await core.faults.delay()
    let name = try core.admit("WatchTrip", tripName: request.name, context)
    var options = RenderOptions(request)
    var sequence: UInt64 = 0
    let schedule = FeedSchedule(renderer: core.renderer, interval: core.options.feedInterval)
    let stepped = core.clock.step != nil
    // Built once: the loop looks the trip up again on every update.
    let key = name.description
    let watch = core.store.watch(key)
    defer { core.store.endWatch(watch, of: key) }
    var record = try Self.record(key, in: core.store)
    // The record and simulated time of the last render, and the wall time at which the plan
    // says the trip looks different next.
    var rendered: (record: TripRecord, time: Double)? = nil
    var due = Int64.min
    while true {
      let now = core.clock.now()
      let simulatedNow = core.clock.simulatedTime(at: now, createdAt: record.createdAt)
      // Catch up phase by phase: when a phase ended since the last update, report the next
      // one as it began before reporting the present.
      var time = max(simulatedNow, 0)
      // With a stepped clock the world holds still between steps, and a boundary between two
      // steps is what a poller sees too: report the present only, so both see the same states.
      if let rendered, !stepped {
        let phaseEnd = rendered.record.state(atSimulatedTime: rendered.time).phaseEnd
        // Only forward: a phase end not after the last look would be looked at again and again.
        if phaseEnd < time && phaseEnd > rendered.time { time = phaseEnd }
      }
      let wall = core.clock.wallTime(at: time, createdAt: record.createdAt)
      let trip = core.renderer.render(record, at: wall, simulatedTime: time, options: options)
      // News: the first update, a change the plan said is due by now, or an UpdateTrip that
      // changed what a caller sees (with the record as it was, the trip would look otherwise).
      let news =
        now >= due
        || rendered.map {
          trip != core.renderer.render($0.record, at: wall, simulatedTime: time, options: options)
        } ?? true
      if news {
        sequence += 1
        options.hold(versionsOf: trip)
        var update = FleetFeed.TripUpdate()
        update.trip = consume trip
        update.sequence = sequence
        update.updateTime = GoogleProtobuf.Timestamp(nanosecondsSince1970: wall)
        try await writer.write(update)
      }
      rendered = (record, time)
      let state = record.state(atSimulatedTime: time)
      if state.phase.isTerminal { return }
      if time < simulatedNow { continue }
      due = schedule.due(after: state, createdAt: record.createdAt, renderedAt: now)
      // A wait can end for a change already shown, or a moment early by the wall clock: then
      // there is nothing new to render yet, so wait on.
      repeat {
        await watch.wait(until: Self.instant(of: due))
        try Task.checkCancellation()
        record = try Self.record(key, in: core.store)
      } while record.revision == rendered?.record.revision && core.clock.now() < due
    }
  }

  /// The record of trip `key`; NOT_FOUND once it is gone.
  private static func record(_ key: String, in store: TripStore) throws -> TripRecord {
    guard let record = store.record(named: key) else { throw FleetEngineError.tripNotFound(key) }
    return record
  }

  /// The moment on the continuous clock just after wall time `wall` (nanoseconds since 1970),
  /// a millisecond late so that the wall clock has certainly reached it.
  static func instant(of wall: Int64) -> ContinuousClock.Instant {
    let (untilThen, overflow) = wall.subtractingReportingOverflow(SimulationClock.realNow())
    let wait = overflow ? Int64.max / 2 : min(untilThen, Int64.max / 2)
    return .now + .nanoseconds(max(wait, 0)) + .milliseconds(1)
  }
}
