internal import FleetProtos
@_spi(GeneratedCode) internal import ProtoRuntime

// Shared and back-to-back trips: Fleet Engine's `remaining_waypoints` and `vehicle_waypoints`
// list every stop of the vehicle, other riders' included (Google's guide on retrieving trips
// directly says to filter them before showing a trip to its rider). With
// TripService.Options.hidesOtherTrips on, the held trip keeps only this trip's stops, and
// the next-stop ETA is that of this trip's own next stop.

/// The vehicle's next stop as a response gave it, when that stop is another trip's: the
/// server's ETA there and its time until then. Read before the response is merged.
struct OtherTripsNextStop {
  var eta: GoogleProtobuf.Timestamp?
  var remainingTime: GoogleProtobuf.Duration?

  /// Nil when the response's first remaining waypoint is trip `own`'s, names no trip, or
  /// there is none (or `own` is empty): the usual poll, which then costs a byte comparison.
  init?(_ c: UnsafePointer<FleetEngine.Trip.CMessage>, ownTripID own: String)
    throws(ProtoDecodingError)
  {
    let m = c.pointee
    guard !own.isEmpty, m.n_remaining_waypoints > 0, let first = m.remaining_waypoints?[0],
      let id = first.pointee.trip_id, id.pointee != 0, !ProtoC.same(own, id),
      // Decoded only when the bytes differ: Swift's == also equates other spellings.
      try ProtoC.string(id) != own
    else { return nil }
    eta = try m.eta_to_first_waypoint.map { (p) throws(ProtoDecodingError) in
      try GoogleProtobuf.Timestamp(cMessage: p)
    }
    remainingTime = try m.remaining_time_to_first_waypoint.map {
      (p) throws(ProtoDecodingError) in try GoogleProtobuf.Duration(cMessage: p)
    }
  }
}

extension FleetEngine.Trip {
  /// Whether response `c` may show another trip than `own`: a remaining or vehicle waypoint
  /// names a trip whose ID is not `own` byte for byte. False for the usual answer, where
  /// ``hideOtherTrips(after:ownTripID:)`` would change nothing (nor when `own` is empty).
  static func namesOtherTrips(_ c: UnsafePointer<CMessage>, ownTripID own: String) -> Bool {
    guard !own.isEmpty else { return false }
    let m = c.pointee
    func other(
      _ list: UnsafeMutablePointer<UnsafeMutablePointer<FleetEngine.TripWaypoint.CMessage>?>?,
      _ count: Int
    ) -> Bool {
      guard let list else { return false }
      for index in 0..<count {
        guard let id = list[index]?.pointee.trip_id, id.pointee != 0 else { continue }
        if !ProtoC.same(own, id) { return true }
      }
      return false
    }
    return other(m.remaining_waypoints, m.n_remaining_waypoints)
      || other(m.vehicle_waypoints, m.n_vehicle_waypoints)
  }

  /// Removes other trips' waypoints from `remainingWaypoints` and `vehicleWaypoints` (a
  /// waypoint with no trip ID is kept), right after a response was merged in. When the
  /// response said the vehicle's next stop is another trip's (`otherNext`),
  /// `eta_to_first_waypoint` becomes the ETA of this trip's own first waypoint, and
  /// `remaining_time_to_first_waypoint` the time until then as the server counted it (nil
  /// when the server's values do not tell). Costs a scan of the waypoints when there is
  /// nothing to hide.
  mutating func hideOtherTrips(after otherNext: OtherTripsNextStop?, ownTripID own: String) {
    guard !own.isEmpty else { return }
    @inline(__always) func isOther(_ waypoint: FleetEngine.TripWaypoint) -> Bool {
      let id = waypoint.tripID
      return !id.isEmpty && id != own
    }
    if let otherNext {
      let ownNext = remainingWaypoints.first { !isOther($0) }
      // The server's clock: its ETA at the vehicle's next stop less the time until then.
      // Values outside protobuf's ranges (a broken server) leave the time unknown.
      let serverNow = otherNext.eta?.sinceEpoch.flatMap { eta in
        otherNext.remainingTime?.checked.map { eta - $0 }
      }
      etaToFirstWaypoint = ownNext?.eta
      remainingTimeToFirstWaypoint = ownNext?.eta?.sinceEpoch.flatMap { eta in
        serverNow.map { GoogleProtobuf.Duration(eta - $0) }
      }
    }
    if remainingWaypoints.contains(where: isOther) { remainingWaypoints.removeAll(where: isOther) }
    if vehicleWaypoints.contains(where: isOther) { vehicleWaypoints.removeAll(where: isOther) }
  }
}

extension GoogleProtobuf.Timestamp {
  /// The time since 1970, when within the range protobuf allows (years 1 to 9999).
  fileprivate var sinceEpoch: Duration? {
    guard (-62_135_596_800...253_402_300_799).contains(seconds) else { return nil }
    return .seconds(seconds) + .nanoseconds(Int64(nanos))
  }
}

extension GoogleProtobuf.Duration {
  /// The duration, when within the ±10,000 years protobuf allows.
  fileprivate var checked: Duration? {
    guard (-315_576_000_000...315_576_000_000).contains(seconds) else { return nil }
    return duration
  }
}
