internal import FleetProtos
internal import ProtoRuntime

extension FleetEngine.Trip {
  /// Updates this trip (the last one known) with `r`, a decoded `GetTrip` answer that may be
  /// partial: what `sent` tells (``TripWireDigests/LeftOut``) was left out of the bytes `r`
  /// was decoded from, or, of what was sent, is known to be the held value (kept as it is,
  /// its storage shared); every other value the answer sends is taken.
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
  /// Returns the properties whose callbacks report a change, compared as ``TripChanges``
  /// compares them. Never fails: decoding, which may, is done before.
  @discardableResult
  mutating func merge(
    _ r: FleetEngine.Trip,
    sent: TripWireDigests.LeftOut = TripWireDigests.LeftOut(fields: 0, waypoints: 0)
  ) -> TripModelUpdatedPropertyFields {
    // What changes is worked out first, from this trip untouched; then it is applied in
    // place. No copy of the trip's storage is made (between polls the follower holds the
    // only reference), and each property is compared only where the response changed it.
    let plan = TripMergePlan(r, merging: self, sent: sent)
    return apply(plan, r)
  }

  /// Phase two of ``merge(_:sent:)``: `plan`'s values into this trip, and the scalar
  /// fields straight from `r`, concern by concern in the order of the trip's fields (the
  /// first path shared with the route at the end).
  private mutating func apply(_ plan: TripMergePlan, _ r: FleetEngine.Trip)
    -> TripModelUpdatedPropertyFields
  {
    var changed: TripModelUpdatedPropertyFields = []
    let indexBefore = knownIntermediateDestinationIndex
    applyIdentity(plan, r, &changed)
    applyStops(plan, r, &changed)
    applyRemainingWaypoints(plan, &changed)
    applyActiveRoute(plan, r, &changed)
    applyVehicle(plan, r, &changed)
    shareFirstPathWithRoute()
    changed.insert(.intermediateDestinationIndex, if: knownIntermediateDestinationIndex != indexBefore)
    return changed
  }

  /// The trip's name, vehicle, status and type.
  @inline(__always)
  private mutating func applyIdentity(
    _ plan: TripMergePlan, _ r: FleetEngine.Trip,
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
    let status = r.tripStatus
    if status != .unknownTripStatus, status != tripStatus {
      tripStatus = status
      changed.insert(.tripStatus)
    }
    let type = r.tripType
    if type != .unknownTripType, type != tripType {
      tripType = type
      changed.insert(.tripType)
    }
  }

  /// The pickup, the intermediate destinations and the drop-off: places, times and ETAs.
  @inline(__always)
  private mutating func applyStops(
    _ plan: TripMergePlan, _ r: FleetEngine.Trip,
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
    let index = r.intermediateDestinationIndex
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
    _ plan: TripMergePlan, _ changed: inout TripModelUpdatedPropertyFields
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
    }
    if let v = plan.vehicleWaypoints { vehicleWaypoints = v }
  }

  /// The active route: its segment, traffic, end point, remaining distance and the ETA to
  /// the next waypoint.
  @inline(__always)
  private mutating func applyActiveRoute(
    _ plan: TripMergePlan, _ r: FleetEngine.Trip,
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
    if let v = plan.currentRouteSegmentEndPoint { currentRouteSegmentEndPoint = v }
    if let v = r.remainingDistanceMeters, v != remainingDistanceMeters {
      remainingDistanceMeters = v
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
    _ plan: TripMergePlan, _ r: FleetEngine.Trip,
    _ changed: inout TripModelUpdatedPropertyFields
  ) {
    let passengers = r.numberOfPassengers
    if passengers != 0, passengers != numberOfPassengers {
      numberOfPassengers = passengers
      changed.insert(.numberOfPassengers)
    }
    if let v = plan.lastLocation {
      changed.insert(.vehicleLocation, if: v.location != lastLocation?.location)
      lastLocation = v
    }
    let snappable = r.lastLocationSnappable
    if snappable != lastLocationSnappable { lastLocationSnappable = snappable }
    let view = r.view
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
}

extension Array {
  /// Whether both arrays are views of one buffer (a copy not yet written to).
  fileprivate func sharesStorage(with other: [Element]) -> Bool {
    withUnsafeBufferPointer { mine in
      other.withUnsafeBufferPointer { theirs in mine.baseAddress == theirs.baseAddress }
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
