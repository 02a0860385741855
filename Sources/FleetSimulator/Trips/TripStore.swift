internal import FleetSync
internal import GRPCWire

/// Every trip of a simulator, by name and by vehicle, behind one lock.
///
/// Methods only look up and change records; planning and rendering happen outside the
/// lock, on copies (a record's arrays are shared, not copied, so a copy is cheap).
final class TripStore: Sendable {
  private struct State {
    var trips: [String: TripRecord] = [:]
    var namesByVehicle: [String: [String]] = [:]
    var vehiclesAssigned = 0
  }

  private let state = PosixMutex(State())

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

  /// Changes trip `name` with `change` (which must be quick: it runs under the lock) and
  /// returns the changed record; NOT_FOUND when there is no such trip. A change that throws
  /// leaves the record as it was.
  func modify(
    named name: String, _ change: (inout TripRecord) throws(RPCError) -> Void
  ) throws(RPCError) -> TripRecord {
    let result = state.withLock { state -> Result<TripRecord, RPCError> in
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
      state.trips[name] = record
      return .success(record)
    }
    return try result.get()
  }

  /// Removes trip `name` when `allowed` approves of it: nil (it is gone), or the error from
  /// `allowed`, or NOT_FOUND.
  func remove(named name: String, if allowed: (TripRecord) -> RPCError?) throws(RPCError) {
    let failure = state.withLock { state -> RPCError? in
      guard let record = state.trips[name] else { return FleetEngineError.tripNotFound(name) }
      if let refusal = allowed(record) { return refusal }
      state.trips[name] = nil
      state.namesByVehicle[record.vehicleID]?.removeAll { $0 == name }
      if state.namesByVehicle[record.vehicleID]?.isEmpty == true {
        state.namesByVehicle[record.vehicleID] = nil
      }
      return nil
    }
    if let failure { throw failure }
  }

  /// The trips served by vehicle `vehicleID`, sorted by name.
  func records(vehicleID: String) -> [TripRecord] {
    state.withLock { state in
      (state.namesByVehicle[vehicleID] ?? []).compactMap { state.trips[$0] }
    }.sorted { $0.name < $1.name }
  }
}
