internal import FleetProtos

// Shared and back-to-back trips: Fleet Engine's `remaining_waypoints` and `vehicle_waypoints`
// list every stop of the vehicle, other riders' included (Google's guide on retrieving trips
// directly says to filter them before showing a trip to its rider). With
// TripService.Options.hidesOtherTrips on, the held trip keeps only this trip's stops, and
// the next-stop ETA is that of this trip's own next stop.

/// What a response said about the vehicle's next stop, read before it is merged: the trip of
/// its first remaining waypoint, and the server's ETA there and time until then.
struct ServerNextStop {
  var tripID: String?
  var eta: GoogleProtobuf.Timestamp?
  var remainingTime: GoogleProtobuf.Duration?

  init(_ c: UnsafePointer<FleetEngine.Trip.CMessage>) throws(ProtoDecodingError) {
    let m = c.pointee
    if m.n_remaining_waypoints > 0, let first = m.remaining_waypoints?[0] {
      tripID = try ProtoC.string(first.pointee.trip_id)
    }
    eta = try m.eta_to_first_waypoint.map { (p) throws(ProtoDecodingError) in
      try GoogleProtobuf.Timestamp(cMessage: p)
    }
    remainingTime = try m.remaining_time_to_first_waypoint.map {
      (p) throws(ProtoDecodingError) in try GoogleProtobuf.Duration(cMessage: p)
    }
  }
}

extension FleetEngine.Trip {
  /// Removes other trips' waypoints from `remainingWaypoints` and `vehicleWaypoints` (a
  /// waypoint with no trip ID is kept), right after a response was merged in; `vehicleNext`
  /// is what that response said about the vehicle's next stop. When that stop belongs to
  /// another trip, `eta_to_first_waypoint` becomes the ETA of this trip's own first waypoint,
  /// and `remaining_time_to_first_waypoint` the time until then as the server counted it (nil
  /// when the server's values do not tell). Costs a scan of the waypoints when there is
  /// nothing to hide.
  mutating func hideOtherTrips(after vehicleNext: ServerNextStop, ownTripID own: String) {
    guard !own.isEmpty else { return }
    @inline(__always) func isOtherTrip(_ id: String) -> Bool { !id.isEmpty && id != own }
    @inline(__always) func isOther(_ waypoint: FleetEngine.TripWaypoint) -> Bool {
      isOtherTrip(waypoint.tripID)
    }
    if let next = vehicleNext.tripID, isOtherTrip(next) {
      let ownNext = remainingWaypoints.first { !isOther($0) }
      // The server's clock: its ETA at the vehicle's next stop less the time until then.
      // Values outside protobuf's ranges (a broken server) leave the time unknown.
      let serverNow = vehicleNext.eta?.sinceEpoch.flatMap { eta in
        vehicleNext.remainingTime?.checked.map { eta - $0 }
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
