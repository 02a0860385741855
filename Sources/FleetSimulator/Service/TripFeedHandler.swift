internal import FleetProtos
internal import GRPCWire

/// `fleetconsumer.v1.TripFeed/WatchTrip`: streams one trip's changes until it ends.
///
/// The first update carries the whole trip (less the versioned parts the request says the
/// caller holds); after that an update goes out whenever what a caller would see changed:
/// at every status change — each one, even when the stream fell behind the simulation — at
/// each turn of the traffic period, at each UpdateTrip, and every
/// ``SimulatorOptions/feedInterval`` while the vehicle moves. Fields that change on every
/// look without news (the remaining time, the location's timestamps) do not count as a
/// change. After a COMPLETE or CANCELED update the stream ends OK.
///
/// Between updates the stream sleeps until its trip's plan says the next change is due
/// (``FeedSchedule``) or the trip's record changes (``TripWatch``): a trip that stands still
/// costs nothing until then, however many streams follow it.
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
    let name = try await core.admit("WatchTrip", tripName: request.name, context)
    var options = RenderOptions(request)
    var sequence: UInt64 = 0
    var lastSent: FleetEngine.Trip? = nil
    var lastRendered: Double? = nil
    let schedule = FeedSchedule(renderer: core.renderer, interval: core.options.feedInterval)
    let stepped = core.clock.step != nil
    // Built once: the loop looks the trip up again on every update.
    let key = name.description
    let watch = core.store.watch(key)
    defer { core.store.endWatch(watch, of: key) }
    while true {
      guard let record = core.store.record(named: key) else {
        throw FleetEngineError.tripNotFound(key)
      }
      let now = core.clock.now()
      let simulatedNow = core.clock.simulatedTime(at: now, createdAt: record.createdAt)
      // Catch up phase by phase: when a phase ended since the last update, report the next
      // one as it began before reporting the present.
      var time = max(simulatedNow, 0)
      // With a stepped clock the world holds still between steps, and a boundary between two
      // steps is what a poller sees too: report the present only, so both see the same states.
      if let lastRendered, !stepped {
        let phaseEnd = record.state(atSimulatedTime: lastRendered).phaseEnd
        if phaseEnd < time { time = phaseEnd }
      }
      let wall = core.clock.wallTime(at: time, createdAt: record.createdAt)
      let trip = core.renderer.render(record, at: wall, simulatedTime: time, options: options)
      let comparable = Self.comparable(trip, stepped: stepped)
      if comparable != lastSent {
        sequence += 1
        var update = FleetFeed.TripUpdate()
        update.trip = trip
        update.sequence = sequence
        update.updateTime = GoogleProtobuf.Timestamp(nanosecondsSince1970: wall)
        try await writer.write(update)
        lastSent = comparable
        options.hold(versionsOf: trip)
      }
      lastRendered = time
      let state = record.state(atSimulatedTime: time)
      if state.phase.isTerminal { return }
      if time < simulatedNow { continue }
      let due = schedule.due(after: state, createdAt: record.createdAt, renderedAt: now)
      // A wait can end for a change already shown, or a moment early by the wall clock: then
      // there is nothing new to render yet, so wait on.
      repeat {
        await watch.wait(until: Self.instant(of: due))
        try Task.checkCancellation()
      } while core.store.record(named: key)?.revision == record.revision && core.clock.now() < due
    }
  }

  /// The moment on the continuous clock just after wall time `wall` (nanoseconds since 1970),
  /// a millisecond late so that the wall clock has certainly reached it.
  static func instant(of wall: Int64) -> ContinuousClock.Instant {
    let (untilThen, overflow) = wall.subtractingReportingOverflow(SimulationClock.realNow())
    let wait = overflow ? Int64.max / 2 : min(untilThen, Int64.max / 2)
    return .now + .nanoseconds(max(wait, 0)) + .milliseconds(1)
  }

  /// What of `trip` tells whether a caller would see news: all of it but the parts that come
  /// with a version (the versions stand for them, and once held they are left out) and, in
  /// continuous time (not `stepped`), the fields that differ on every look though nothing
  /// happened. With a stepped clock nothing changes between steps, so nothing is noise: every
  /// state a poller could see is sent, with its changed durations and timestamps.
  static func comparable(_ trip: FleetEngine.Trip, stepped: Bool) -> FleetEngine.Trip {
    var trip = trip
    trip.route = []
    trip.currentRouteSegment = ""
    trip.currentRouteSegmentTraffic = nil
    for index in trip.remainingWaypoints.indices {
      trip.remainingWaypoints[index].pathToWaypoint = []
      trip.remainingWaypoints[index].encodedPathToWaypoint = ""
      trip.remainingWaypoints[index].trafficToWaypoint = nil
    }
    guard !stepped else { return trip }
    trip.remainingTimeToFirstWaypoint = nil
    trip.lastLocation?.updateTime = nil
    trip.lastLocation?.serverTime = nil
    for index in trip.remainingWaypoints.indices {
      trip.remainingWaypoints[index].duration = nil
    }
    return trip
  }
}
