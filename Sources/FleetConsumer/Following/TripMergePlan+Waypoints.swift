internal import FleetProtos
internal import ProtoRuntime

extension FleetEngine.Trip {
  /// The remaining waypoints: always sent by GetTrip, but the paths and traffic inside them
  /// only when `remaining_waypoints_route_version` moved; those are filled in from the
  /// matching waypoint (same trip, type and location) we already had.
  ///
  /// The answer's list is the sent waypoints; the left-out ones (`bytes.keptWaypoints`) are
  /// the held ones at their indices, and those sent without their stop (`bytes.keptStops`)
  /// have the held one's stop at their index.
  func mergeWaypoints(_ r: FleetEngine.Trip, _ bytes: SentBytes, into plan: inout TripMergePlan) {
    let waypointsVersion = bytes.version(r.remainingWaypointsVersion, remainingWaypointsVersion)
    let pathsVersion = bytes.version(
      r.remainingWaypointsRouteVersion, remainingWaypointsRouteVersion)
    plan.remainingWaypointsVersion = waypointsVersion
    plan.remainingWaypointsRouteVersion = pathsVersion
    let sent = r.remainingWaypoints
    let count = sent.count + bytes.keptWaypoints.nonzeroBitCount
    guard count > 0 else {
      if waypointsVersion != nil, !remainingWaypoints.isEmpty { plan.remainingWaypoints = [] }
      return
    }
    // The usual poll: the same stops, only their distances and times new. Updated in place
    // later, with no list built and no waypoint copied.
    if pathsVersion == nil, !plan.changesStops, count == remainingWaypoints.count,
      let numbers = numbersOnly(sent, bytes)
    {
      plan.waypointNumbers = numbers
      return
    }
    var merged: [FleetEngine.TripWaypoint] = []
    merged.reserveCapacity(count)
    var next = 0
    for index in 0..<count {
      let bit: UInt64 = index < 64 ? 1 << UInt64(index) : 0
      if bytes.keptWaypoints & bit != 0 {
        merged.append(remainingWaypoints[index])
        continue
      }
      var waypoint = sent[next]
      next += 1
      if bytes.keptStops & bit != 0 {
        // Sent without its stop, the held one's at this index.
        waypoint.location = remainingWaypoints[index].location
        waypoint.tripID = remainingWaypoints[index].tripID
        waypoint.waypointType = remainingWaypoints[index].waypointType
      }
      merged.append(pathsVersion == nil ? withHeldPath(waypoint) : waypoint)
    }
    // Unchanged as a whole (every waypoint left out, as many as held): nothing to set.
    if bytes.keptWaypoints.nonzeroBitCount == count, count == remainingWaypoints.count { return }
    plan.remainingWaypoints = merged
  }

  /// What changes when every waypoint the answer sends was sent without its stop, which is
  /// the held one's at its index, and without a path, and is the first held waypoint for
  /// its stop: per waypoint, its own numbers that the answer sends anew. Nil when that is not
  /// so; the list is then merged waypoint by waypoint.
  private func numbersOnly(_ sent: [FleetEngine.TripWaypoint], _ bytes: SentBytes)
    -> [WaypointNumbers]?
  {
    var numbers: [WaypointNumbers] = []
    var next = 0
    for index in remainingWaypoints.indices {
      let bit: UInt64 = index < 64 ? 1 << UInt64(index) : 0
      if bytes.keptWaypoints & bit != 0 { continue }
      // The digests set a stop's bit only for a waypoint sent without a path.
      guard bytes.keptStops & bit != 0, next < sent.count else { return nil }
      let held = remainingWaypoints[index]
      // The first waypoint is the first for its stop; a later one is looked for before it.
      guard index == 0 || heldWaypoint(matching: held) == index else { return nil }
      if let changed = WaypointNumbers(sent[next], index: index, held: held) {
        numbers.append(changed)
      }
      next += 1
    }
    return numbers
  }

  /// A waypoint sent with no path, given the path and traffic of the first held waypoint
  /// for the same stop, if any.
  private func withHeldPath(_ waypoint: FleetEngine.TripWaypoint) -> FleetEngine.TripWaypoint {
    guard waypoint.pathToWaypoint.isEmpty, waypoint.encodedPathToWaypoint.isEmpty,
      waypoint.trafficToWaypoint == nil, let held = heldWaypoint(matching: waypoint)
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

/// A remaining waypoint's own numbers as an answer sends them anew: every field but the stop
/// (trip, type and location) and the path and its traffic (`path_to_waypoint`,
/// `encoded_path_to_waypoint`, `traffic_to_waypoint`); nil fields keep the held values.
/// Compared with `==`, exact for them (integers and unknown fields' bytes). The fields are
/// listed by hand: `TripMergeEquivalenceTests` fails when trips.proto gains one.
struct WaypointNumbers {
  /// The waypoint's index in the remaining waypoints.
  let index: Int
  /// Always the answer's: absent means none.
  let distanceMeters: Int32?
  var eta: GoogleProtobuf.Timestamp??
  var duration: GoogleProtobuf.Duration??
  var unknownFields: ProtoUnknownFields?

  /// What `sent` sends anew for `held`, the waypoint at `index`; nil when it is all the
  /// held values.
  init?(_ sent: FleetEngine.TripWaypoint, index: Int, held: FleetEngine.TripWaypoint) {
    self.index = index
    distanceMeters = sent.distanceMeters
    var any = distanceMeters != held.distanceMeters
    if sent.eta != held.eta {
      eta = .some(sent.eta)
      any = true
    }
    if sent.duration != held.duration {
      duration = .some(sent.duration)
      any = true
    }
    if sent.unknownFields != held.unknownFields {
      unknownFields = sent.unknownFields
      any = true
    }
    guard any else { return nil }
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
