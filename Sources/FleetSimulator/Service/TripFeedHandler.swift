internal import FleetProtos
internal import GRPCWire

/// `fleetconsumer.v1.TripFeed/WatchTrip`: streams one trip's changes until it ends.
///
/// The first update carries the whole trip (less the versioned parts the request says the
/// caller holds); after that an update goes out whenever what a caller would see changed:
/// at every status change — each one, even when the stream fell behind the simulation — and
/// every ``SimulatorOptions/feedInterval`` while the vehicle moves. Fields that change on
/// every look without news (the remaining time, the location's timestamps) do not count as a
/// change. After a COMPLETE or CANCELED update the stream ends OK.
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
    let feedInterval = core.options.feedInterval
    // Built once: the loop looks the trip up again on every update.
    let key = name.description
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
      if let lastRendered, core.clock.step == nil {
        let phaseEnd = record.state(atSimulatedTime: lastRendered).phaseEnd
        if phaseEnd < time { time = phaseEnd }
      }
      let wall = core.clock.wallTime(at: time, createdAt: record.createdAt)
      let trip = core.renderer.render(record, at: wall, simulatedTime: time, options: options)
      // With a stepped clock nothing changes between steps, so nothing is noise: send every
      // state a poller could see, including changed durations and timestamps.
      let comparable = core.clock.step == nil ? Self.withoutVolatileFields(trip) : trip
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
      let phaseEndWall = core.clock.wallTime(at: state.phaseEnd, createdAt: record.createdAt)
      // A millisecond past the boundary, so the clock has certainly reached the next phase.
      let untilPhaseEnd = Duration.nanoseconds(max(phaseEndWall - now, 0)) + .milliseconds(1)
      try await Task.sleep(for: min(untilPhaseEnd, feedInterval))
    }
  }

  /// `trip` without the fields that differ on every look though nothing happened.
  static func withoutVolatileFields(_ trip: FleetEngine.Trip) -> FleetEngine.Trip {
    var trip = trip
    trip.remainingTimeToFirstWaypoint = nil
    trip.lastLocation?.updateTime = nil
    trip.lastLocation?.serverTime = nil
    for index in trip.remainingWaypoints.indices {
      trip.remainingWaypoints[index].duration = nil
    }
    return trip
  }
}
