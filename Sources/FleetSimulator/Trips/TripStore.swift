internal import FleetSync
internal import GRPCWire

/// Every trip of a simulator, by name and by vehicle, behind one lock.
///
/// Methods only look up and change records; planning and rendering happen outside the
/// lock, on copies (a record's arrays are shared, not copied, so a copy is cheap). Streams
/// that follow a trip register a ``TripWatch``, signalled after each change to the trip's
/// record and when it is removed.
final class TripStore: Sendable {
  private struct State {
    var trips: [String: TripRecord] = [:]
    var namesByVehicle: [String: [String]] = [:]
    var vehiclesAssigned = 0
    /// The watches of the trips streams follow, by trip name.
    var watches: [String: [TripWatch]] = [:]

    mutating func newVehicleID() -> String {
      vehiclesAssigned += 1
      return "sim-vehicle-\(vehiclesAssigned)"
    }

    /// Gives each assignment of `record` without a vehicle a new one.
    mutating func giveVehicles(_ record: inout TripRecord) {
      if record.first.vehicleID.isEmpty { record.first.vehicleID = newVehicleID() }
      for index in record.later.indices where record.later[index].vehicleID.isEmpty {
        record.later[index].vehicleID = newVehicleID()
      }
    }

    /// Lists `record` under each of its vehicles.
    mutating func index(_ record: TripRecord) {
      for vehicle in record.vehicleIDs {
        namesByVehicle[vehicle, default: []].append(record.name)
      }
    }

    /// Moves a record from the lists of `old`'s vehicles to those of `new`'s.
    mutating func reindex(from old: TripRecord, to new: TripRecord) {
      let (oldVehicles, newVehicles) = (old.vehicleIDs, new.vehicleIDs)
      guard oldVehicles != newVehicles else { return }
      unindex(old)
      index(new)
    }

    /// Takes `record` off the lists of its vehicles.
    mutating func unindex(_ record: TripRecord) {
      for vehicle in record.vehicleIDs {
        namesByVehicle[vehicle]?.removeAll { $0 == record.name }
        if namesByVehicle[vehicle]?.isEmpty == true { namesByVehicle[vehicle] = nil }
      }
    }
  }

  private let state = PosixMutex(State())
  /// Ends the timed waits of every watch.
  private let timer = WatchTimer()

  /// The number of trips.
  var count: Int { state.withLock { $0.trips.count } }

  /// Adds `records`, giving each assignment without a vehicle a new simulated one
  /// (`sim-vehicle-<n>`); throws ALREADY_EXISTS, adding none, when a name is taken.
  func insert(_ records: [TripRecord]) throws(RPCError) -> [TripRecord] {
    try commit([], inserting: records)!
  }

  /// `count` new simulated vehicle IDs (`sim-vehicle-<n>`), for records that share one or
  /// change vehicle as planned.
  func newVehicleIDs(_ count: Int) -> [String] {
    state.withLock { state in (0..<count).map { _ in state.newVehicleID() } }
  }

  /// Stores `changed` (changed copies of stored records) and adds `inserted` in one step, and
  /// returns them as stored (revisions counted, vehicles given); nil, storing nothing, when a
  /// stored record is no longer at the revision its copy has — another change came first:
  /// read it again and retry. Throws NOT_FOUND when a changed record is gone, ALREADY_EXISTS
  /// when an inserted one's name is taken.
  func commit(_ changed: [TripRecord], inserting inserted: [TripRecord] = []) throws(RPCError)
    -> [TripRecord]?
  {
    let result = state.withLock { state -> Result<([TripRecord], [TripWatch])?, RPCError> in
      for record in changed {
        guard let stored = state.trips[record.name] else {
          return .failure(FleetEngineError.tripNotFound(record.name))
        }
        if stored.revision != record.revision { return .success(nil) }
      }
      var seen = Set<String>()
      for record in inserted
      where state.trips[record.name] != nil || !seen.insert(record.name).inserted {
        return .failure(
          FleetEngineError.make(
            .alreadyExists, "trip \(record.name) already exists", reason: "TRIP_ALREADY_EXISTS",
            metadata: ["trip": record.name]))
      }
      var stored: [TripRecord] = []
      stored.reserveCapacity(changed.count + inserted.count)
      var watches: [TripWatch] = []
      for var record in changed {
        let old = state.trips[record.name]!
        state.giveVehicles(&record)
        state.reindex(from: old, to: record)
        record.revision += 1
        state.trips[record.name] = record
        watches += state.watches[record.name] ?? []
        stored.append(record)
      }
      state.trips.reserveCapacity(state.trips.count + inserted.count)
      for var record in inserted {
        state.giveVehicles(&record)
        state.index(record)
        state.trips[record.name] = record
        stored.append(record)
      }
      return .success((stored, watches))
    }
    guard let (stored, watches) = try result.get() else { return nil }
    for watch in watches { watch.signal() }
    return stored
  }

  /// The record of trip `name`, if there is one.
  func record(named name: String) -> TripRecord? {
    state.withLock { $0.trips[name] }
  }

  /// A new watch of trip `name` (which need not exist), signalled when its record changes or
  /// goes; give it back with ``endWatch(_:of:)``.
  func watch(_ name: String) -> TripWatch {
    let watch = TripWatch(timer: timer)
    state.withLock { $0.watches[name, default: []].append(watch) }
    return watch
  }

  /// Forgets `watch` of trip `name`.
  func endWatch(_ watch: TripWatch, of name: String) {
    state.withLock { state in
      state.watches[name]?.removeAll { $0 === watch }
      if state.watches[name]?.isEmpty == true { state.watches[name] = nil }
    }
  }

  /// Changes trip `name` with `change` (which must be quick: it runs under the lock), counts
  /// a new ``TripRecord/revision`` and returns the changed record; NOT_FOUND when there is
  /// no such trip. A change that throws leaves the record as it was.
  func modify(
    named name: String, _ change: (inout TripRecord) throws(RPCError) -> Void
  ) throws(RPCError) -> TripRecord {
    let result = state.withLock { state -> Result<(TripRecord, [TripWatch]), RPCError> in
      guard var record = state.trips[name] else {
        return .failure(FleetEngineError.tripNotFound(name))
      }
      let old = record
      do throws(RPCError) {
        try change(&record)
      } catch {
        return .failure(error)
      }
      state.reindex(from: old, to: record)
      record.revision += 1
      state.trips[name] = record
      return .success((record, state.watches[name] ?? []))
    }
    let (record, watches) = try result.get()
    for watch in watches { watch.signal() }
    return record
  }

  /// Removes trip `name` when `allowed` approves of it (returns nil), and signals its
  /// watches; throws the error from `allowed`, or NOT_FOUND.
  func remove(named name: String, if allowed: (TripRecord) -> RPCError?) throws(RPCError) {
    let result = state.withLock { state -> Result<[TripWatch], RPCError> in
      guard let record = state.trips[name] else {
        return .failure(FleetEngineError.tripNotFound(name))
      }
      if let refusal = allowed(record) { return .failure(refusal) }
      state.trips[name] = nil
      state.unindex(record)
      return .success(state.watches[name] ?? [])
    }
    for watch in try result.get() { watch.signal() }
  }

  /// The trips vehicle `vehicleID` serves, served or will serve, sorted by name.
  func records(vehicleID: String) -> [TripRecord] {
    state.withLock { state in
      (state.namesByVehicle[vehicleID] ?? []).compactMap { state.trips[$0] }
    }.sorted { $0.name < $1.name }
  }
}
