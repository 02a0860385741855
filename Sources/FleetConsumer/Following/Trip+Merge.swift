internal import FleetProtos

extension FleetEngine.Trip {
  /// Updates this trip (the last one known) with `c`, a `GetTrip` answer unpacked by
  /// protobuf-c that may be partial, reading it in place: a field whose value this trip holds
  /// already is compared, not decoded, so an unchanged string, list or message keeps its
  /// storage (and compares as unchanged at once afterwards). Only what changed is decoded.
  ///
  /// Fleet Engine leaves the versioned parts out when they have not changed since the
  /// versions the request carried (trip_api.proto, GetTripRequest): the route and
  /// `current_route_segment` (`current_route_segment_version`), the route's traffic
  /// (`current_route_segment_traffic_version`), and the paths and traffic inside the remaining
  /// waypoints (`remaining_waypoints_route_version`). An absent part therefore means
  /// "unchanged", not "empty", and is kept. The same rule covers every other field the
  /// response leaves out (a message field that is absent, an empty list or string, an enum or
  /// number at zero): the last known value stays, so a partial answer never erases what the
  /// server did not mention. Two exceptions: a versioned list comes back empty when its
  /// version changed (it really is empty now), and `last_location_snappable`, a bool whose
  /// absence cannot be told from `false`, always takes the response's value.
  ///
  /// Throws what decoding the response would (a string that is not UTF-8, say), and then
  /// leaves this trip as it was.
  mutating func merge(cMessage c: UnsafePointer<CMessage>) throws(ProtoDecodingError) {
    // Changed on a copy sharing this trip's storage: the first change copies it once, a
    // field that fails to decode leaves `self` untouched, and an answer that changes nothing
    // allocates nothing.
    var trip = self
    let m = c.pointee
    if let v = try changed(m.name, trip.name) { trip.name = v }
    if let v = try changed(m.vehicle_id, trip.vehicleID) { trip.vehicleID = v }
    let status = FleetEngine.TripStatus(rawValue: Int32(truncatingIfNeeded: m.trip_status.rawValue))
    if status != .unknownTripStatus, status != trip.tripStatus { trip.tripStatus = status }
    let type = FleetEngine.TripType(rawValue: Int32(truncatingIfNeeded: m.trip_type.rawValue))
    if type != .unknownTripType, type != trip.tripType { trip.tripType = type }
    if let v = try changed(m.pickup_point, trip.pickupPoint) { trip.pickupPoint = v }
    if let v = try changed(m.actual_pickup_point, trip.actualPickupPoint) {
      trip.actualPickupPoint = v
    }
    if let v = try changed(m.actual_pickup_arrival_point, trip.actualPickupArrivalPoint) {
      trip.actualPickupArrivalPoint = v
    }
    if let v = try changed(m.pickup_time, trip.pickupTime) { trip.pickupTime = v }
    let destinationsVersion = try changed(
      m.intermediate_destinations_version, trip.intermediateDestinationsVersion)
    let destinationsChanged = destinationsVersion != nil
    if let v = destinationsVersion { trip.intermediateDestinationsVersion = v }
    if let v = try changed(
      m.intermediate_destinations, m.n_intermediate_destinations, trip.intermediateDestinations,
      orEmptyWhen: destinationsChanged)
    {
      trip.intermediateDestinations = v
    }
    // 0 is also the first destination's index: taken when the destinations themselves
    // changed (a new list starts again), otherwise it cannot be told from "left out".
    if m.intermediate_destination_index != 0 || destinationsChanged,
      m.intermediate_destination_index != trip.intermediateDestinationIndex
    {
      trip.intermediateDestinationIndex = m.intermediate_destination_index
    }
    if let v = try changed(
      m.actual_intermediate_destination_arrival_points,
      m.n_actual_intermediate_destination_arrival_points,
      trip.actualIntermediateDestinationArrivalPoints)
    {
      trip.actualIntermediateDestinationArrivalPoints = v
    }
    if let v = try changed(
      m.actual_intermediate_destinations, m.n_actual_intermediate_destinations,
      trip.actualIntermediateDestinations)
    {
      trip.actualIntermediateDestinations = v
    }
    if let v = try changed(m.dropoff_point, trip.dropoffPoint) { trip.dropoffPoint = v }
    if let v = try changed(m.actual_dropoff_point, trip.actualDropoffPoint) {
      trip.actualDropoffPoint = v
    }
    if let v = try changed(m.dropoff_time, trip.dropoffTime) { trip.dropoffTime = v }
    try trip.mergeWaypoints(m)
    if let v = try changed(m.vehicle_waypoints, m.n_vehicle_waypoints, trip.vehicleWaypoints) {
      trip.vehicleWaypoints = v
    }
    try trip.mergeRoute(m)
    if var v = try changed(m.current_route_segment_end_point, trip.currentRouteSegmentEndPoint) {
      trip.shareStop(of: &v, as: m.current_route_segment_end_point)
      trip.currentRouteSegmentEndPoint = v
    }
    if let p = m.remaining_distance_meters, p.pointee.value != trip.remainingDistanceMeters {
      trip.remainingDistanceMeters = p.pointee.value
    }
    if let v = try changed(m.eta_to_first_waypoint, trip.etaToFirstWaypoint) {
      trip.etaToFirstWaypoint = v
    }
    if let v = try changed(m.remaining_time_to_first_waypoint, trip.remainingTimeToFirstWaypoint)
    {
      trip.remainingTimeToFirstWaypoint = v
    }
    if m.number_of_passengers != 0, m.number_of_passengers != trip.numberOfPassengers {
      trip.numberOfPassengers = m.number_of_passengers
    }
    if let v = try changed(m.last_location, trip.lastLocation) { trip.lastLocation = v }
    let snappable = m.last_location_snappable != 0
    if snappable != trip.lastLocationSnappable { trip.lastLocationSnappable = snappable }
    let view = FleetEngine.TripView(rawValue: Int32(truncatingIfNeeded: m.view.rawValue))
    if view != .unspecified, view != trip.view { trip.view = view }
    if let v = try changed(m.attributes, m.n_attributes, trip.attributes) { trip.attributes = v }
    if !trip.unknownFields.matches(cMessage: c) {
      trip.unknownFields = try ProtoUnknownFields(cMessage: c)
    }
    trip.shareFirstPathWithRoute()
    self = trip
  }

  /// Makes the first remaining waypoint's path share the active route's storage when the two
  /// hold the same points, as they usually do (the route is the way to the next stop): a
  /// followed trip then keeps one copy of them, not two. Costs a comparison only when they
  /// are not already shared.
  mutating func shareFirstPathWithRoute() {
    guard !route.isEmpty, let first = remainingWaypoints.first,
      first.pathToWaypoint.count == route.count,
      !first.pathToWaypoint.sharesStorage(with: route), first.pathToWaypoint == route
    else { return }
    remainingWaypoints[0].pathToWaypoint = route
  }

  /// Makes the locations of the remaining waypoints and of the current route segment's end
  /// share the storage of this trip's pickup, drop-off or intermediate destination when they
  /// are the same place, as they usually are (a waypoint is one of the trip's stops, and the
  /// segment ends at the first of them): a followed trip then keeps one copy of each stop, not
  /// up to three. For a trip just decoded from `c`; a merge shares the waypoints it decodes as
  /// it goes.
  mutating func shareStopLocations(as c: UnsafePointer<CMessage>) {
    // The stops taken out first: reading them from `self` while a waypoint of `self` is
    // being changed would overlap the two accesses.
    let stops = OwnStops(self)
    let m = c.pointee
    if let list = m.remaining_waypoints, remainingWaypoints.count == m.n_remaining_waypoints {
      for index in remainingWaypoints.indices {
        stops.share(&remainingWaypoints[index], as: list[index])
      }
    }
    if currentRouteSegmentEndPoint != nil {
      stops.share(&currentRouteSegmentEndPoint!, as: m.current_route_segment_end_point)
    }
  }

  /// Gives `waypoint`, just decoded from `p`, the location of this trip's own stop at the same
  /// place, if there is one.
  private func shareStop(
    of waypoint: inout FleetEngine.TripWaypoint,
    as p: UnsafeMutablePointer<FleetEngine.TripWaypoint.CMessage>?
  ) {
    OwnStops(self).share(&waypoint, as: p)
  }

  /// The route, its encoded form and its traffic: kept unless their version moved.
  private mutating func mergeRoute(_ m: CMessage) throws(ProtoDecodingError) {
    let routeVersion = try changed(m.current_route_segment_version, currentRouteSegmentVersion)
    let trafficVersion = try changed(
      m.current_route_segment_traffic_version, currentRouteSegmentTrafficVersion)
    if let v = routeVersion { currentRouteSegmentVersion = v }
    if let v = try changed(m.route, m.n_route, route, orEmptyWhen: routeVersion != nil) {
      route = v
    }
    if let v = try changed(
      m.current_route_segment, currentRouteSegment, orEmptyWhen: routeVersion != nil)
    {
      currentRouteSegment = v
    }
    if let v = trafficVersion { currentRouteSegmentTrafficVersion = v }
    let traffic = m.current_route_segment_traffic
    if traffic != nil || trafficVersion != nil,
      !ProtoC.same(currentRouteSegmentTraffic, traffic)
    {
      currentRouteSegmentTraffic = try traffic.map {
        (p) throws(ProtoDecodingError) in try FleetEngine.ConsumableTrafficPolyline(cMessage: p)
      }
    }
  }

  /// The remaining waypoints: always sent by GetTrip, but the paths and traffic inside them
  /// only when `remaining_waypoints_route_version` moved; those are filled in from the
  /// matching waypoint (same trip, type and location) we already had.
  private mutating func mergeWaypoints(_ m: CMessage) throws(ProtoDecodingError) {
    let waypointsVersion = try changed(m.remaining_waypoints_version, remainingWaypointsVersion)
    let pathsVersion = try changed(
      m.remaining_waypoints_route_version, remainingWaypointsRouteVersion)
    if let v = waypointsVersion { remainingWaypointsVersion = v }
    if let v = pathsVersion { remainingWaypointsRouteVersion = v }
    let count = m.n_remaining_waypoints
    guard count > 0, let list = m.remaining_waypoints else {
      if waypointsVersion != nil, !remainingWaypoints.isEmpty { remainingWaypoints = [] }
      return
    }
    // Built from the first waypoint that differs from the held one at its index: a poll that
    // changes no waypoint (the usual one) builds no list.
    var merged: [FleetEngine.TripWaypoint]? = nil
    for index in 0..<count {
      let (waypoint, kept) = try mergedWaypoint(
        list[index], at: index, pathsChanged: pathsVersion != nil)
      if merged == nil, !kept {
        merged = Array(remainingWaypoints.prefix(index))
        merged!.reserveCapacity(count)
      }
      merged?.append(waypoint)
    }
    if let merged {
      remainingWaypoints = merged
    } else if remainingWaypoints.count != count {
      remainingWaypoints.removeLast(remainingWaypoints.count - count)
    }
  }

  /// The response's waypoint `p` as the merge keeps it, and whether that is the held
  /// waypoint at `index` unchanged. A waypoint sent with its path (or after the paths'
  /// version moved) is taken as sent. One sent without it (the usual poll) takes the path
  /// and traffic of the first held waypoint for the same stop: that held waypoint is
  /// updated with what the response changed, rather than the response decoded whole.
  private func mergedWaypoint(
    _ p: UnsafeMutablePointer<FleetEngine.TripWaypoint.CMessage>?, at index: Int,
    pathsChanged: Bool
  ) throws(ProtoDecodingError) -> (FleetEngine.TripWaypoint, kept: Bool) {
    guard let p else { return (withHeldPath(FleetEngine.TripWaypoint(), pathsChanged), false) }
    let w = p.pointee
    let sentPath =
      w.n_path_to_waypoint > 0 || !ProtoC.same("", w.encoded_path_to_waypoint)
      || w.traffic_to_waypoint != nil
    if sentPath || pathsChanged {
      if index < remainingWaypoints.count, remainingWaypoints[index].matches(cMessage: p) {
        return (remainingWaypoints[index], true)
      }
      var decoded = try FleetEngine.TripWaypoint(cMessage: p)
      shareStop(of: &decoded, as: p)
      return (decoded, false)
    }
    let type = FleetEngine.WaypointType(rawValue: Int32(truncatingIfNeeded: w.waypoint_type.rawValue))
    if let stop = remainingWaypoints.firstIndex(where: {
      $0.waypointType == type && ProtoC.same($0.tripID, w.trip_id)
        && ProtoC.same($0.location, w.location)
    }),
      // The first held waypoint for that stop as the decoded one would find it (Swift's ==
      // also equates spellings that differ in bytes).
      heldWaypoint(matching: remainingWaypoints[stop]) == stop
    {
      var waypoint = remainingWaypoints[stop]
      let changed = try waypoint.takeAllButPath(p)
      return (waypoint, !changed && stop == index)
    }
    var decoded = try withHeldPath(FleetEngine.TripWaypoint(cMessage: p), pathsChanged)
    shareStop(of: &decoded, as: p)
    return (decoded, false)
  }

  /// A decoded waypoint with no path, given the path and traffic of the first held waypoint
  /// for the same stop, if any (and the paths' version did not move).
  private func withHeldPath(_ waypoint: FleetEngine.TripWaypoint, _ pathsChanged: Bool)
    -> FleetEngine.TripWaypoint
  {
    guard !pathsChanged, waypoint.pathToWaypoint.isEmpty,
      waypoint.encodedPathToWaypoint.isEmpty, waypoint.trafficToWaypoint == nil,
      let held = heldWaypoint(matching: waypoint)
    else { return waypoint }
    var filled = waypoint
    filled.pathToWaypoint = remainingWaypoints[held].pathToWaypoint
    filled.encodedPathToWaypoint = remainingWaypoints[held].encodedPathToWaypoint
    filled.trafficToWaypoint = remainingWaypoints[held].trafficToWaypoint
    return filled
  }

  /// The index of the first held waypoint for the same stop as `waypoint`: same trip, type
  /// and location.
  private func heldWaypoint(matching waypoint: FleetEngine.TripWaypoint) -> Int? {
    remainingWaypoints.firstIndex {
      $0.tripID == waypoint.tripID && $0.waypointType == waypoint.waypointType
        && $0.location == waypoint.location
    }
  }
}

extension FleetEngine.TripWaypoint {
  /// Takes every field of `c` but the stop (trip, type and location, which the caller found
  /// equal) and the path and its traffic (`path_to_waypoint`, `encoded_path_to_waypoint`,
  /// `traffic_to_waypoint`, which the response left out); returns whether any changed. The
  /// fields are listed by hand: `TripMergeEquivalenceTests` fails when trips.proto gains one.
  fileprivate mutating func takeAllButPath(_ c: UnsafePointer<CMessage>) throws(
    ProtoDecodingError
  ) -> Bool {
    let m = c.pointee
    var changed = false
    let distance = m.distance_meters?.pointee.value
    if distance != distanceMeters {
      distanceMeters = distance
      changed = true
    }
    if !ProtoC.same(eta, m.eta) {
      eta = try m.eta.map { (p) throws(ProtoDecodingError) in
        try GoogleProtobuf.Timestamp(cMessage: p)
      }
      changed = true
    }
    if !ProtoC.same(duration, m.duration) {
      duration = try m.duration.map { (p) throws(ProtoDecodingError) in
        try GoogleProtobuf.Duration(cMessage: p)
      }
      changed = true
    }
    if !unknownFields.matches(cMessage: c) {
      unknownFields = try ProtoUnknownFields(cMessage: c)
      changed = true
    }
    return changed
  }
}

/// The decoded message at `p` when the response has one and it is not `held`; nil to keep
/// `held`.
@inline(__always)
private func changed<M: CBridgedMessage>(_ p: UnsafeMutablePointer<M.CMessage>?, _ held: M?)
  throws(ProtoDecodingError) -> M?
{
  guard let p, !ProtoC.same(held, p) else { return nil }
  return try M(cMessage: p)
}

/// The decoded string when the response has one (not empty; or empty, when `orEmptyWhen`)
/// and it is not `held`.
@inline(__always)
private func changed(
  _ p: UnsafeMutablePointer<CChar>?, _ held: String, orEmptyWhen versionChanged: Bool = false
) throws(ProtoDecodingError) -> String? {
  let sent = p.map { $0.pointee != 0 } ?? false
  guard sent || versionChanged, !ProtoC.same(held, p) else { return nil }
  return try ProtoC.string(p)
}

/// The decoded list when the response has one (not empty; or empty, when `orEmptyWhen`) and
/// it is not `held`.
@inline(__always)
private func changed<M: CBridgedMessage>(
  _ p: UnsafeMutablePointer<UnsafeMutablePointer<M.CMessage>?>?, _ count: Int, _ held: [M],
  orEmptyWhen versionChanged: Bool = false
) throws(ProtoDecodingError) -> [M]? {
  guard count > 0 || versionChanged, !ProtoC.sameMessages(held, p, count) else { return nil }
  return try ProtoC.messages(p, count, as: M.self)
}

extension Array {
  /// Whether both arrays are views of one buffer (a copy not yet written to).
  fileprivate func sharesStorage(with other: [Element]) -> Bool {
    withUnsafeBufferPointer { mine in
      other.withUnsafeBufferPointer { theirs in mine.baseAddress == theirs.baseAddress }
    }
  }
}

/// A trip's own stops, whose locations its waypoints share.
private struct OwnStops {
  let pickup: FleetEngine.TerminalLocation?
  let dropoff: FleetEngine.TerminalLocation?
  let intermediate: [FleetEngine.TerminalLocation]

  init(_ trip: FleetEngine.Trip) {
    pickup = trip.pickupPoint
    dropoff = trip.dropoffPoint
    intermediate = trip.intermediateDestinations
  }

  /// Replaces the location of `waypoint`, decoded from `p`, with the stop that decoding its
  /// location would give, if there is one. Compared with the wire's values, not with `==`,
  /// which equates -0.0 with 0.0 and strings spelled in different bytes: the shared stop is
  /// then exactly what the server sent.
  func share(
    _ waypoint: inout FleetEngine.TripWaypoint,
    as p: UnsafeMutablePointer<FleetEngine.TripWaypoint.CMessage>?
  ) {
    guard waypoint.location != nil, let location = p?.pointee.location else { return }
    if let stop = pickup, stop.matches(cMessage: location) {
      waypoint.location = stop
    } else if let stop = dropoff, stop.matches(cMessage: location) {
      waypoint.location = stop
    } else if let stop = intermediate.first(where: { $0.matches(cMessage: location) }) {
      waypoint.location = stop
    }
  }
}
