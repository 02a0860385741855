internal import FleetProtos
@_spi(GeneratedCode) internal import ProtoRuntime

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
  /// `kept` (bit i: index i) lists remaining waypoints the response left out as the same as
  /// the held ones at those indices (``TripWireDigests``): the response's list is the held
  /// waypoint at each such index, and its own waypoints, in order, at the others.
  ///
  /// Throws what decoding the response would (a string that is not UTF-8, say), and then
  /// leaves this trip as it was. Returns the properties whose callbacks report a change,
  /// compared as ``TripChanges`` compares them.
  @discardableResult
  mutating func merge(cMessage c: UnsafePointer<CMessage>, keepingWaypoints kept: UInt64 = 0)
    throws(ProtoDecodingError) -> TripModelUpdatedPropertyFields
  {
    // What changed is decoded first, from this trip untouched, so that a field that fails to
    // decode leaves it as it was; then it is applied in place. No copy of the trip's storage
    // is made (between polls the follower holds the only reference), and each property is
    // compared only where the response changed it.
    let plan = try TripMergePlan(c, merging: self, keepingWaypoints: kept)
    return apply(plan, c)
  }

  /// Phase two of ``merge(cMessage:)``: `plan`'s values into this trip, and the scalar
  /// fields straight from `c`, concern by concern in the order of the trip's fields (the
  /// stops are shared with the waypoints once those are in, the first path with the route
  /// at the end).
  private mutating func apply(_ plan: TripMergePlan, _ c: UnsafePointer<CMessage>)
    -> TripModelUpdatedPropertyFields
  {
    var changed: TripModelUpdatedPropertyFields = []
    let indexBefore = knownIntermediateDestinationIndex
    applyIdentity(plan, c, &changed)
    applyStops(plan, c, &changed)
    applyRemainingWaypoints(plan, c, &changed)
    applyActiveRoute(plan, c, &changed)
    applyVehicle(plan, c, &changed)
    shareFirstPathWithRoute()
    changed.insert(.intermediateDestinationIndex, if: knownIntermediateDestinationIndex != indexBefore)
    return changed
  }

  /// The trip's name, vehicle, status and type.
  @inline(__always)
  private mutating func applyIdentity(
    _ plan: TripMergePlan, _ c: UnsafePointer<CMessage>,
    _ changed: inout TripModelUpdatedPropertyFields
  ) {
    if let v = plan.name {
      changed.insert(.tripName, if: v != name)
      name = v
    }
    if let v = plan.vehicleID {
      changed.insert(.vehicleID, if: v != vehicleID)
      vehicleID = v
    }
    let status = FleetEngine.TripStatus(
      rawValue: Int32(truncatingIfNeeded: c.pointee.trip_status.rawValue))
    if status != .unknownTripStatus, status != tripStatus {
      tripStatus = status
      changed.insert(.tripStatus)
    }
    let type = FleetEngine.TripType(rawValue: Int32(truncatingIfNeeded: c.pointee.trip_type.rawValue))
    if type != .unknownTripType, type != tripType {
      tripType = type
      changed.insert(.tripType)
    }
  }

  /// The pickup, the intermediate destinations and the drop-off: places, times and ETAs.
  @inline(__always)
  private mutating func applyStops(
    _ plan: TripMergePlan, _ c: UnsafePointer<CMessage>,
    _ changed: inout TripModelUpdatedPropertyFields
  ) {
    if let v = plan.pickupPoint {
      changed.insert(.pickupLocation, if: v.point != pickupPoint?.point)
      pickupPoint = v
    }
    if let v = plan.actualPickupPoint { actualPickupPoint = v }
    if let v = plan.actualPickupArrivalPoint { actualPickupArrivalPoint = v }
    if let v = plan.pickupTime {
      changed.insert(.pickupETA, if: v != pickupTime)
      pickupTime = v
    }
    let destinationsChanged = plan.intermediateDestinationsVersion != nil
    if let v = plan.intermediateDestinationsVersion { intermediateDestinationsVersion = v }
    if let v = plan.intermediateDestinations {
      changed.insert(.intermediateDestinations, if: v != intermediateDestinations)
      intermediateDestinations = v
    }
    // 0 is also the first destination's index: taken when the destinations themselves
    // changed (a new list starts again), otherwise it cannot be told from "left out".
    let index = c.pointee.intermediate_destination_index
    if index != 0 || destinationsChanged, index != intermediateDestinationIndex {
      intermediateDestinationIndex = index
    }
    if let v = plan.actualIntermediateDestinationArrivalPoints {
      actualIntermediateDestinationArrivalPoints = v
    }
    if let v = plan.actualIntermediateDestinations { actualIntermediateDestinations = v }
    if let v = plan.dropoffPoint {
      changed.insert(.dropoffLocation, if: v.point != dropoffPoint?.point)
      dropoffPoint = v
    }
    if let v = plan.actualDropoffPoint { actualDropoffPoint = v }
    if let v = plan.dropoffTime {
      changed.insert(.dropoffETA, if: v != dropoffTime)
      dropoffTime = v
    }
  }

  /// The remaining waypoints, their versions and the vehicle's waypoints; the remaining route
  /// (made of the remaining waypoints) is compared only when they changed.
  @inline(__always)
  private mutating func applyRemainingWaypoints(
    _ plan: TripMergePlan, _ c: UnsafePointer<CMessage>,
    _ changed: inout TripModelUpdatedPropertyFields
  ) {
    if let v = plan.remainingWaypointsVersion { remainingWaypointsVersion = v }
    if let v = plan.remainingWaypointsRouteVersion { remainingWaypointsRouteVersion = v }
    if !plan.waypointNumbers.isEmpty {
      // The same stops, paths and traffic: of the remaining route only its distance (the
      // later waypoints' distances) may change.
      let distanceBefore = RemainingRoute.distance(remainingWaypoints)
      var any = false
      for numbers in plan.waypointNumbers where remainingWaypoints[numbers.index].take(numbers) {
        any = true
      }
      if any {
        changed.insert(.remainingWaypoints)
        if RemainingRoute.distance(remainingWaypoints) != distanceBefore {
          changed.insert(.remainingRouteDistance)
        }
      }
    }
    if let v = plan.remainingWaypoints {
      if v != remainingWaypoints {
        changed.insert(.remainingWaypoints)
        changed.formUnion(RemainingRoute.changedFields(from: remainingWaypoints, to: v))
      }
      remainingWaypoints = v
      // Waypoints were decoded against the stops held before: share the new stops instead.
      if plan.changesStops { shareStopLocations(as: c) }
    }
    if let v = plan.vehicleWaypoints { vehicleWaypoints = v }
  }

  /// The active route: its segment, traffic, end point, remaining distance and the ETA to
  /// the next waypoint.
  @inline(__always)
  private mutating func applyActiveRoute(
    _ plan: TripMergePlan, _ c: UnsafePointer<CMessage>,
    _ changed: inout TripModelUpdatedPropertyFields
  ) {
    if let v = plan.currentRouteSegmentVersion { currentRouteSegmentVersion = v }
    if let v = plan.route {
      changed.insert(.activeRoute, if: v != route)
      route = v
    }
    if let v = plan.currentRouteSegment { currentRouteSegment = v }
    if let v = plan.currentRouteSegmentTrafficVersion { currentRouteSegmentTrafficVersion = v }
    if let v = plan.currentRouteSegmentTraffic {
      changed.insert(.activeRouteTraffic, if: v != currentRouteSegmentTraffic)
      currentRouteSegmentTraffic = v
    }
    if var v = plan.currentRouteSegmentEndPoint {
      shareStop(of: &v, as: c.pointee.current_route_segment_end_point)
      currentRouteSegmentEndPoint = v
    }
    if let p = c.pointee.remaining_distance_meters, p.pointee.value != remainingDistanceMeters {
      remainingDistanceMeters = p.pointee.value
      changed.insert(.activeRouteRemainingDistance)
    }
    if let v = plan.etaToFirstWaypoint {
      changed.insert(.etaToNextWaypoint, if: v != etaToFirstWaypoint)
      etaToFirstWaypoint = v
    }
    if let v = plan.remainingTimeToFirstWaypoint { remainingTimeToFirstWaypoint = v }
  }

  /// The vehicle's passengers and location, the view, the attributes and unknown fields.
  @inline(__always)
  private mutating func applyVehicle(
    _ plan: TripMergePlan, _ c: UnsafePointer<CMessage>,
    _ changed: inout TripModelUpdatedPropertyFields
  ) {
    let passengers = c.pointee.number_of_passengers
    if passengers != 0, passengers != numberOfPassengers {
      numberOfPassengers = passengers
      changed.insert(.numberOfPassengers)
    }
    if let v = plan.lastLocation {
      changed.insert(.vehicleLocation, if: v.location != lastLocation?.location)
      lastLocation = v
    }
    let snappable = c.pointee.last_location_snappable != 0
    if snappable != lastLocationSnappable { lastLocationSnappable = snappable }
    let view = FleetEngine.TripView(rawValue: Int32(truncatingIfNeeded: c.pointee.view.rawValue))
    if view != .unspecified, view != self.view { self.view = view }
    if let v = plan.attributes { attributes = v }
    if let v = plan.unknownFields { unknownFields = v }
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
  func shareStop(
    of waypoint: inout FleetEngine.TripWaypoint,
    as p: UnsafeMutablePointer<FleetEngine.TripWaypoint.CMessage>?
  ) {
    OwnStops(self).share(&waypoint, as: p)
  }
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

extension TripModelUpdatedPropertyFields {
  /// Adds `field` when `differ`: a merge's note that a property changed.
  @inline(__always)
  fileprivate mutating func insert(_ field: TripModelUpdatedPropertyFields, if differ: Bool) {
    if differ { insert(field) }
  }
}
