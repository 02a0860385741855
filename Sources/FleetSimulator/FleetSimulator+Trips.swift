internal import FleetProtos
internal import GRPCWire

/// Trips made up in process: demo trips, and the many trips of a load run.
extension FleetSimulator {
  /// Creates a trip for a demo and returns its name: `providers/<providerID>/trips/<tripID>`
  /// (`demo-<n>` unless `tripID` is given), with a generated pickup and drop-off and
  /// `intermediateDestinations` generated stops between them, and, with `reassignment`, a
  /// change of vehicle as planned there. With the default options it completes about 15
  /// real seconds later (a second more per intermediate destination).
  ///
  /// Throws ``SimulatorError/invalidTrip(_:)`` for a bad provider or trip ID, or when the
  /// name is taken.
  public func createDemoTrip(
    providerID: String = "demo-provider", tripID: String? = nil, intermediateDestinations: Int = 0,
    reassignment: PlannedReassignment? = nil
  ) throws -> String {
    let tripID = tripID ?? nextDemoTripIDs(1)[0]
    let intermediates = max(0, intermediateDestinations)
    guard let reassignment else {
      return try createTrips(
        [(providerID: providerID, tripID: tripID)], intermediateDestinations: intermediates)[0]
    }
    return try make { now throws(RPCError) in
      let name = try TripName(requestParent: "providers/\(providerID)", tripID: tripID)
      var record = try core.makeRecord(
        name, FleetEngine.Trip(), now: now, generatedIntermediates: intermediates)
      record.vehicleID = core.store.newVehicleIDs(1)[0]
      return [core.planning(reassignment, of: record)]
    }[0]
  }

  /// Creates two SHARED demo trips on one vehicle and returns their names, first rider's
  /// first: `providers/<providerID>/trips/<id>` (`demo-<n>` and `demo-<n+1>` unless
  /// `tripIDs` are given). The vehicle picks up the first rider, then the second some blocks
  /// away, drops off the first, then the second (``SimulatedTripKind/shared``); each trip's
  /// remaining waypoints show the other's stops on the way.
  ///
  /// Throws ``SimulatorError/invalidTrip(_:)`` for a bad provider or trip ID, or when a name
  /// is taken.
  public func createSharedDemoTrips(
    providerID: String = "demo-provider", tripIDs: (first: String, second: String)? = nil
  ) throws -> [String] {
    let ids = tripIDs.map { [$0.first, $0.second] } ?? nextDemoTripIDs(2)
    return try make { now throws(RPCError) in
      let names = try ids.map { id throws(RPCError) in
        try TripName(requestParent: "providers/\(providerID)", tripID: id)
      }
      return core.makeSharedPair(
        names[0], names[1], vehicleID: core.store.newVehicleIDs(1)[0], now: now)
    }
  }

  /// Creates `count` trips of kind `kind` named `providers/<providerID>/trips/<prefix><n>`
  /// (n from 1, zero padded to the same width) with generated stops, all at once, and
  /// returns their names.
  ///
  /// Exclusive trips (the default) get vehicles `sim-vehicle-<n>` in the order of the trips
  /// when the simulator has given out none before. Throws ``SimulatorError/invalidTrip(_:)``
  /// when a name is taken (creating none) or invalid.
  public func createTrips(
    count: Int, providerID: String, tripIDPrefix: String = "trip-",
    kind: SimulatedTripKind = .exclusive
  ) throws -> [String] {
    let ids = Self.tripIDs(count: count, prefix: tripIDPrefix).map {
      (providerID: providerID, tripID: $0)
    }
    guard kind != .exclusive else { return try createTrips(ids, intermediateDestinations: 0) }
    return try make { now throws(RPCError) in
      let names = try ids.map { id throws(RPCError) in
        try TripName(requestParent: "providers/\(id.providerID)", tripID: id.tripID)
      }
      var records: [TripRecord] = []
      records.reserveCapacity(names.count)
      var index = 0
      while index < names.count {
        let name = names[index]
        let tripKind = Self.kind(ofTrip: index, of: kind)
        if tripKind == .shared && index + 1 < names.count
          && Self.kind(ofTrip: index + 1, of: kind) == .shared
        {
          records += core.makeSharedPair(
            name, names[index + 1], vehicleID: core.store.newVehicleIDs(1)[0], now: now)
          index += 2
          continue
        }
        var trip = FleetEngine.Trip()
        if tripKind == .shared { trip.tripType = .shared }
        var record = try core.makeRecord(
          name, trip, now: now,
          generatedIntermediates: tripKind == .multiStop
            ? SimulatedTripKind.multiStopIntermediateDestinations : 0)
        record.vehicleID = core.store.newVehicleIDs(1)[0]
        if tripKind == .reassigned { record = core.planning(PlannedReassignment(), of: record) }
        records.append(record)
        index += 1
      }
      return records
    }
  }

  /// The kind of trip `index` (from 0) of a run of kind `kind`: a shared trip pairs with the
  /// next when that is shared too.
  static func kind(ofTrip index: Int, of kind: SimulatedTripKind) -> SimulatedTripKind {
    guard kind == .mixed else { return kind }
    let round: [SimulatedTripKind] = [.exclusive, .multiStop, .reassigned, .shared, .shared]
    return round[index % round.count]
  }

  /// The names ``createTrips(count:providerID:tripIDPrefix:kind:)`` gives, without creating
  /// anything: for a client of a `fleet-sim --trips N` in another process.
  public static func tripNames(count: Int, providerID: String, tripIDPrefix: String = "trip-")
    -> [String]
  {
    tripIDs(count: count, prefix: tripIDPrefix).map { "providers/\(providerID)/trips/\($0)" }
  }

  /// `<prefix><n>` for n from 1 to `count`, zero padded to the same width.
  private static func tripIDs(count: Int, prefix: String) -> [String] {
    let width = String(max(count, 1)).count
    return (1...max(count, 1)).prefix(count).map { number in
      let digits = String(number)
      return prefix + String(repeating: "0", count: width - digits.count) + digits
    }
  }

  /// The next `count` demo trip IDs, `demo-<n>`.
  private func nextDemoTripIDs(_ count: Int) -> [String] {
    demoTrips.withLock { number in
      (0..<count).map { _ in
        number += 1
        return "demo-\(number)"
      }
    }
  }

  private func createTrips(
    _ ids: [(providerID: String, tripID: String)], intermediateDestinations: Int
  ) throws -> [String] {
    try make { now throws(RPCError) in
      var records: [TripRecord] = []
      records.reserveCapacity(ids.count)
      for id in ids {
        let name = try TripName(requestParent: "providers/\(id.providerID)", tripID: id.tripID)
        records.append(
          try core.makeRecord(
            name, FleetEngine.Trip(), now: now, generatedIntermediates: intermediateDestinations))
      }
      return records
    }
  }

  /// Stores the records `records` makes at the current time and returns their names;
  /// ``SimulatorError/invalidTrip(_:)`` for what fails.
  private func make(_ records: (Int64) throws(RPCError) -> [TripRecord]) throws -> [String] {
    let now = core.clock.now()
    do throws(RPCError) {
      return try core.store.insert(try records(now)).map(\.name)
    } catch {
      throw SimulatorError.invalidTrip(error.message)
    }
  }
}
