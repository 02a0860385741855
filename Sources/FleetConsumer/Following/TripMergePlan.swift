internal import FleetProtos
@_spi(GeneratedCode) internal import ProtoRuntime

/// Phase one of ``FleetEngine/Trip/merge(cMessage:)``: what a `GetTrip` answer (or a feed
/// update) changes in a held trip, decoded from protobuf-c's unpacked message while the held
/// trip stays untouched; nil keeps the held value. A field equal to the held one is compared,
/// not decoded. The scalar fields (status, type, counts, the view) are read in phase two.
struct TripMergePlan {
  var name: String?
  var vehicleID: String?
  var pickupPoint: FleetEngine.TerminalLocation?
  var actualPickupPoint: FleetEngine.StopLocation?
  var actualPickupArrivalPoint: FleetEngine.StopLocation?
  var pickupTime: GoogleProtobuf.Timestamp?
  var intermediateDestinationsVersion: GoogleProtobuf.Timestamp?
  var intermediateDestinations: [FleetEngine.TerminalLocation]?
  var actualIntermediateDestinationArrivalPoints: [FleetEngine.StopLocation]?
  var actualIntermediateDestinations: [FleetEngine.StopLocation]?
  var dropoffPoint: FleetEngine.TerminalLocation?
  var actualDropoffPoint: FleetEngine.StopLocation?
  var dropoffTime: GoogleProtobuf.Timestamp?
  var remainingWaypointsVersion: GoogleProtobuf.Timestamp?
  var remainingWaypointsRouteVersion: GoogleProtobuf.Timestamp?
  var remainingWaypoints: [FleetEngine.TripWaypoint]?
  /// Instead of a new `remainingWaypoints`: the held waypoints whose own numbers alone
  /// changed (the same stops at the same indices, no path sent, as on most polls), to update
  /// in place. Empty when there are none, or when `remainingWaypoints` is set.
  var waypointNumbers: [WaypointNumbers] = []
  var vehicleWaypoints: [FleetEngine.TripWaypoint]?
  var currentRouteSegmentVersion: GoogleProtobuf.Timestamp?
  var route: [GoogleType.LatLng]?
  var currentRouteSegment: String?
  var currentRouteSegmentTrafficVersion: GoogleProtobuf.Timestamp?
  /// `.some(nil)`: the traffic is gone (its version moved and none was sent).
  var currentRouteSegmentTraffic: FleetEngine.ConsumableTrafficPolyline??
  var currentRouteSegmentEndPoint: FleetEngine.TripWaypoint?
  var etaToFirstWaypoint: GoogleProtobuf.Timestamp?
  var remainingTimeToFirstWaypoint: GoogleProtobuf.Duration?
  var lastLocation: FleetEngine.VehicleLocation?
  var attributes: [FleetEngine.TripAttribute]?
  var unknownFields: ProtoUnknownFields?

  /// Whether one of the trip's own stops changes: the waypoints were decoded sharing the
  /// stops held before.
  var changesStops: Bool {
    pickupPoint != nil || dropoffPoint != nil || intermediateDestinations != nil
  }

  /// What `c` changes in `held`; `kept` as ``FleetEngine/Trip/merge(cMessage:keepingWaypoints:)``
  /// says. Throws what decoding the changed fields would.
  init(
    _ c: UnsafePointer<FleetEngine.Trip.CMessage>, merging held: FleetEngine.Trip,
    keepingWaypoints kept: UInt64 = 0
  ) throws(ProtoDecodingError) {
    let m = c.pointee
    name = try changed(m.name, held.name)
    vehicleID = try changed(m.vehicle_id, held.vehicleID)
    pickupPoint = try changed(m.pickup_point, held.pickupPoint)
    actualPickupPoint = try changed(m.actual_pickup_point, held.actualPickupPoint)
    actualPickupArrivalPoint = try changed(
      m.actual_pickup_arrival_point, held.actualPickupArrivalPoint)
    pickupTime = try changed(m.pickup_time, held.pickupTime)
    intermediateDestinationsVersion = try changed(
      m.intermediate_destinations_version, held.intermediateDestinationsVersion)
    intermediateDestinations = try changed(
      m.intermediate_destinations, m.n_intermediate_destinations, held.intermediateDestinations,
      orEmptyWhen: intermediateDestinationsVersion != nil)
    actualIntermediateDestinationArrivalPoints = try changed(
      m.actual_intermediate_destination_arrival_points,
      m.n_actual_intermediate_destination_arrival_points,
      held.actualIntermediateDestinationArrivalPoints)
    actualIntermediateDestinations = try changed(
      m.actual_intermediate_destinations, m.n_actual_intermediate_destinations,
      held.actualIntermediateDestinations)
    dropoffPoint = try changed(m.dropoff_point, held.dropoffPoint)
    actualDropoffPoint = try changed(m.actual_dropoff_point, held.actualDropoffPoint)
    dropoffTime = try changed(m.dropoff_time, held.dropoffTime)
    try held.mergeWaypoints(m, keeping: kept, into: &self)
    vehicleWaypoints = try changed(m.vehicle_waypoints, m.n_vehicle_waypoints, held.vehicleWaypoints)
    try held.mergeRoute(m, into: &self)
    currentRouteSegmentEndPoint = try changed(
      m.current_route_segment_end_point, held.currentRouteSegmentEndPoint)
    etaToFirstWaypoint = try changed(m.eta_to_first_waypoint, held.etaToFirstWaypoint)
    remainingTimeToFirstWaypoint = try changed(
      m.remaining_time_to_first_waypoint, held.remainingTimeToFirstWaypoint)
    lastLocation = try changed(m.last_location, held.lastLocation)
    attributes = try changed(m.attributes, m.n_attributes, held.attributes)
    if !held.unknownFields.matches(cMessage: c) {
      unknownFields = try ProtoUnknownFields(cMessage: c)
    }
  }
}

extension FleetEngine.Trip {
  /// The route, its encoded form and its traffic: kept unless their version moved.
  fileprivate func mergeRoute(_ m: CMessage, into plan: inout TripMergePlan)
    throws(ProtoDecodingError)
  {
    let routeVersion = try changed(m.current_route_segment_version, currentRouteSegmentVersion)
    let trafficVersion = try changed(
      m.current_route_segment_traffic_version, currentRouteSegmentTrafficVersion)
    plan.currentRouteSegmentVersion = routeVersion
    plan.route = try changed(m.route, m.n_route, route, orEmptyWhen: routeVersion != nil)
    plan.currentRouteSegment = try changed(
      m.current_route_segment, currentRouteSegment, orEmptyWhen: routeVersion != nil)
    plan.currentRouteSegmentTrafficVersion = trafficVersion
    let traffic = m.current_route_segment_traffic
    if traffic != nil || trafficVersion != nil,
      !ProtoC.same(currentRouteSegmentTraffic, traffic)
    {
      let decoded = try traffic.map {
        (p) throws(ProtoDecodingError) in try FleetEngine.ConsumableTrafficPolyline(cMessage: p)
      }
      plan.currentRouteSegmentTraffic = .some(decoded)
    }
  }

  /// The remaining waypoints: always sent by GetTrip, but the paths and traffic inside them
  /// only when `remaining_waypoints_route_version` moved; those are filled in from the
  /// matching waypoint (same trip, type and location) we already had.
  fileprivate func mergeWaypoints(
    _ m: CMessage, keeping keptByIndex: UInt64, into plan: inout TripMergePlan
  ) throws(ProtoDecodingError) {
    let waypointsVersion = try changed(m.remaining_waypoints_version, remainingWaypointsVersion)
    let pathsVersion = try changed(
      m.remaining_waypoints_route_version, remainingWaypointsRouteVersion)
    plan.remainingWaypointsVersion = waypointsVersion
    plan.remainingWaypointsRouteVersion = pathsVersion
    let count = m.n_remaining_waypoints + keptByIndex.nonzeroBitCount
    let list = m.remaining_waypoints
    guard count > 0 else {
      if waypointsVersion != nil, !remainingWaypoints.isEmpty { plan.remainingWaypoints = [] }
      return
    }
    // The usual poll: the same stops, only their distances and times new. Updated in place
    // later, with no list built and no waypoint copied.
    if pathsVersion == nil, !plan.changesStops, count == remainingWaypoints.count,
      let numbers = try numbersOnly(list, keeping: keptByIndex)
    {
      plan.waypointNumbers = numbers
      return
    }
    // Built from the first waypoint that differs from the held one at its index: a poll that
    // changes no waypoint (the usual one) builds no list.
    var merged: [FleetEngine.TripWaypoint]? = nil
    var sent = 0
    for index in 0..<count {
      let waypoint: FleetEngine.TripWaypoint
      let kept: Bool
      if index < 64, keptByIndex & (1 << UInt64(index)) != 0 {
        (waypoint, kept) = (remainingWaypoints[index], true)
      } else {
        (waypoint, kept) = try mergedWaypoint(
          list?[sent], at: index, pathsChanged: pathsVersion != nil)
        sent += 1
      }
      if merged == nil, !kept {
        merged = Array(remainingWaypoints.prefix(index))
        merged!.reserveCapacity(count)
      }
      merged?.append(waypoint)
    }
    if let merged {
      plan.remainingWaypoints = merged
    } else if remainingWaypoints.count != count {
      plan.remainingWaypoints = Array(remainingWaypoints.prefix(count))
    }
  }

  /// What changes when every waypoint the response sends is the held one at its index (same
  /// stop: trip, type and location, which no earlier held waypoint has) without a path: per
  /// waypoint, its own numbers that the response sends anew. Nil when that is not so; the
  /// list is then merged waypoint by waypoint (``mergedWaypoint(_:at:pathsChanged:)``).
  private func numbersOnly(
    _ list: UnsafeMutablePointer<UnsafeMutablePointer<FleetEngine.TripWaypoint.CMessage>?>?,
    keeping keptByIndex: UInt64
  ) throws(ProtoDecodingError) -> [WaypointNumbers]? {
    var numbers: [WaypointNumbers] = []
    var sent = 0
    for index in remainingWaypoints.indices {
      if index < 64, keptByIndex & (1 << UInt64(index)) != 0 { continue }
      guard let p = list?[sent] else { return nil }
      sent += 1
      let w = p.pointee
      guard w.n_path_to_waypoint == 0, ProtoC.same("", w.encoded_path_to_waypoint),
        w.traffic_to_waypoint == nil
      else { return nil }
      let held = remainingWaypoints[index]
      let type = FleetEngine.WaypointType(
        rawValue: Int32(truncatingIfNeeded: w.waypoint_type.rawValue))
      // The first waypoint is the first for its stop; a later one is looked for before it.
      guard held.waypointType == type, ProtoC.same(held.tripID, w.trip_id),
        ProtoC.same(held.location, w.location), index == 0 || heldWaypoint(matching: held) == index
      else { return nil }
      if let changed = try WaypointNumbers(p, index: index, held: held) { numbers.append(changed) }
    }
    return numbers
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
      let changed = try WaypointNumbers(p, index: stop, held: waypoint).map { waypoint.take($0) }
      return (waypoint, changed != true && stop == index)
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

/// A remaining waypoint's own numbers as a response sends them anew: every field but the stop
/// (trip, type and location) and the path and its traffic (`path_to_waypoint`,
/// `encoded_path_to_waypoint`, `traffic_to_waypoint`). Decoded where their bytes differ from
/// the held waypoint's; nil fields keep the held values. The fields are listed by hand:
/// `TripMergeEquivalenceTests` fails when trips.proto gains one.
struct WaypointNumbers {
  /// The waypoint's index in the remaining waypoints.
  let index: Int
  /// Always the response's: absent means none.
  let distanceMeters: Int32?
  var eta: GoogleProtobuf.Timestamp??
  var duration: GoogleProtobuf.Duration??
  var unknownFields: ProtoUnknownFields?

  /// What `c` sends anew for `held`, the waypoint at `index`; nil when its bytes are all the
  /// held ones.
  init?(
    _ c: UnsafePointer<FleetEngine.TripWaypoint.CMessage>, index: Int,
    held: FleetEngine.TripWaypoint
  ) throws(ProtoDecodingError) {
    let m = c.pointee
    self.index = index
    distanceMeters = m.distance_meters?.pointee.value
    var sent = distanceMeters != held.distanceMeters
    if !ProtoC.same(held.eta, m.eta) {
      eta = .some(
        try m.eta.map { (p) throws(ProtoDecodingError) in
          try GoogleProtobuf.Timestamp(cMessage: p)
        })
      sent = true
    }
    if !ProtoC.same(held.duration, m.duration) {
      duration = .some(
        try m.duration.map { (p) throws(ProtoDecodingError) in
          try GoogleProtobuf.Duration(cMessage: p)
        })
      sent = true
    }
    if !held.unknownFields.matches(cMessage: c) {
      unknownFields = try ProtoUnknownFields(cMessage: c)
      sent = true
    }
    guard sent else { return nil }
  }
}

extension FleetEngine.TripWaypoint {
  /// Takes `numbers` (each field only where it differs, so an unchanged waypoint is not
  /// written); returns whether any value changed.
  mutating func take(_ numbers: WaypointNumbers) -> Bool {
    var changed = false
    if numbers.distanceMeters != distanceMeters {
      distanceMeters = numbers.distanceMeters
      changed = true
    }
    if let eta = numbers.eta, eta != self.eta {
      self.eta = eta
      changed = true
    }
    if let duration = numbers.duration, duration != self.duration {
      self.duration = duration
      changed = true
    }
    if let unknown = numbers.unknownFields, unknown != unknownFields {
      unknownFields = unknown
      changed = true
    }
    return changed
  }
}

/// The decoded message at `p` when the response has one and it is not `held`; nil to keep
/// `held`.
@inline(__always)
private func changed<M: CBridgedMessage>(
  _ p: UnsafeMutablePointer<M.CMessage>?, _ held: @autoclosure () -> M?
) throws(ProtoDecodingError) -> M? {
  // The held value is read only when the response has the field: an answer leaves most out.
  guard let p, !ProtoC.same(held(), p) else { return nil }
  return try M(cMessage: p)
}

/// The decoded string when the response has one (not empty; or empty, when `orEmptyWhen`)
/// and it is not `held`.
@inline(__always)
private func changed(
  _ p: UnsafeMutablePointer<CChar>?, _ held: @autoclosure () -> String,
  orEmptyWhen versionChanged: Bool = false
) throws(ProtoDecodingError) -> String? {
  let sent = p.map { $0.pointee != 0 } ?? false
  guard sent || versionChanged, !ProtoC.same(held(), p) else { return nil }
  return try ProtoC.string(p)
}

/// The decoded list when the response has one (not empty; or empty, when `orEmptyWhen`) and
/// it is not `held`.
@inline(__always)
private func changed<M: CBridgedMessage>(
  _ p: UnsafeMutablePointer<UnsafeMutablePointer<M.CMessage>?>?, _ count: Int,
  _ held: @autoclosure () -> [M], orEmptyWhen versionChanged: Bool = false
) throws(ProtoDecodingError) -> [M]? {
  guard count > 0 || versionChanged, !ProtoC.sameMessages(held(), p, count) else { return nil }
  var strings = ProtoDecodeStrings()
  return try ProtoC.messages(p, count, as: M.self, &strings)
}
