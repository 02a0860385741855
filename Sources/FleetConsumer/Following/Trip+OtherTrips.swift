internal import FleetProtos

// Shared and back-to-back trips: Fleet Engine's `remaining_waypoints` and `vehicle_waypoints`
// list every stop of the vehicle, other riders' included (Google's guide on retrieving trips
// directly says to filter them before showing a trip to its rider). With
// TripService.Options.hidesOtherTrips on, the held trip keeps only this trip's stops, and
// the next-stop ETA is that of this trip's own next stop.

extension FleetEngine.Trip {
  /// Removes other trips' waypoints from `remainingWaypoints` and `vehicleWaypoints` (a
  /// waypoint with no trip ID is kept), right after `response` was merged in. When the
  /// vehicle's next stop (the response's first remaining waypoint) belongs to another trip,
  /// `eta_to_first_waypoint` becomes the ETA of this trip's own first waypoint, and
  /// `remaining_time_to_first_waypoint` the time until then as the server counted it (nil
  /// when the server's values do not tell). Costs a scan of the waypoints when there is
  /// nothing to hide.
  mutating func hideOtherTrips(after response: FleetEngine.Trip, ownTripID own: String) {
    guard !own.isEmpty else { return }
    @inline(__always) func isOther(_ waypoint: FleetEngine.TripWaypoint) -> Bool {
      let id = waypoint.tripID
      return !id.isEmpty && id != own
    }
    if let vehicleNext = response.remainingWaypoints.first, isOther(vehicleNext) {
      let ownNext = remainingWaypoints.first { !isOther($0) }
      let serverNow = response.etaToFirstWaypoint.flatMap { eta in
        response.remainingTimeToFirstWaypoint.map { eta.nanoseconds &- $0.nanoseconds }
      }
      etaToFirstWaypoint = ownNext?.eta
      remainingTimeToFirstWaypoint = ownNext?.eta.flatMap { eta in
        serverNow.map { GoogleProtobuf.Duration(.nanoseconds(eta.nanoseconds &- $0)) }
      }
    }
    if remainingWaypoints.contains(where: isOther) { remainingWaypoints.removeAll(where: isOther) }
    if vehicleWaypoints.contains(where: isOther) { vehicleWaypoints.removeAll(where: isOther) }
  }
}

extension GoogleProtobuf.Timestamp {
  /// Nanoseconds since 1970, saturating.
  fileprivate var nanoseconds: Int64 { saturatingNanoseconds(seconds, nanos) }
}

extension GoogleProtobuf.Duration {
  /// Nanoseconds, saturating.
  fileprivate var nanoseconds: Int64 { saturatingNanoseconds(seconds, nanos) }
}

private func saturatingNanoseconds(_ seconds: Int64, _ nanos: Int32) -> Int64 {
  let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
  guard !overflow else { return seconds < 0 ? .min : .max }
  let (sum, overflowed) = scaled.addingReportingOverflow(Int64(nanos))
  guard !overflowed else { return nanos < 0 ? .min : .max }
  return sum
}
