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
  }

  private let state = PosixMutex(State())
  /// Ends the timed waits of every watch.
  private let timer = WatchTimer()

  /// The number of trips.
  var count: Int { state.withLock { $0.trips.count } }

  /// Adds `records`, giving each without a vehicle a new simulated one (`sim-vehicle-<n>`);
  /// throws ALREADY_EXISTS, adding none, when a name is taken.
  func insert(_ records: [TripRecord]) throws(RPCError) -> [TripRecord] {
    let result = state.withLock { state -> Result<[TripRecord], RPCError> in
      var seen = Set<String>()
      for record in records
      where state.trips[record.name] != nil || !seen.insert(record.name).inserted {
        return .failure(
          FleetEngineError.make(
            .alreadyExists, "trip \(record.name) already exists", reason: "TRIP_ALREADY_EXISTS",
            metadata: ["trip": record.name]))
      }
      state.trips.reserveCapacity(state.trips.count + records.count)
      var inserted: [TripRecord] = []
      inserted.reserveCapacity(records.count)
      for var record in records {
        if record.vehicleID.isEmpty {
          state.vehiclesAssigned += 1
          record.vehicleID = "sim-vehicle-\(state.vehiclesAssigned)"
        }
        state.trips[record.name] = record
        state.namesByVehicle[record.vehicleID, default: []].append(record.name)
        inserted.append(record)
      }
      return .success(inserted)
    }
    return try result.get()
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
      let oldVehicle = record.vehicleID
      do throws(RPCError) {
        try change(&record)
      } catch {
        return .failure(error)
      }
      if record.vehicleID != oldVehicle {
        state.namesByVehicle[oldVehicle]?.removeAll { $0 == name }
        if state.namesByVehicle[oldVehicle]?.isEmpty == true {
          state.namesByVehicle[oldVehicle] = nil
        }
        state.namesByVehicle[record.vehicleID, default: []].append(name)
      }
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
      state.namesByVehicle[record.vehicleID]?.removeAll { $0 == name }
      if state.namesByVehicle[record.vehicleID]?.isEmpty == true {
        state.namesByVehicle[record.vehicleID] = nil
      }
      return .success(state.watches[name] ?? [])
    }
    for watch in try result.get() { watch.signal() }
  }

  /// The trips served by vehicle `vehicleID`, sorted by name.
  func records(vehicleID: String) -> [TripRecord] {
    state.withLock { state in
      (state.namesByVehicle[vehicleID] ?? []).compactMap { state.trips[$0] }
    }.sorted { $0.name < $1.name }
  }
}
