internal import FleetProtos

extension FleetEngine.Trip {
  /// This trip (the last one known) updated with `response`, a `GetTrip` answer that may be
  /// partial.
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
  func merged(with response: FleetEngine.Trip) -> FleetEngine.Trip {
    var trip = response
    keep(\.name, from: self, into: &trip, when: { $0.isEmpty })
    keep(\.vehicleID, from: self, into: &trip, when: { $0.isEmpty })
    keep(\.tripStatus, from: self, into: &trip, when: { $0 == .unknownTripStatus })
    keep(\.tripType, from: self, into: &trip, when: { $0 == .unknownTripType })
    keep(\.pickupPoint, from: self, into: &trip)
    keep(\.actualPickupPoint, from: self, into: &trip)
    keep(\.actualPickupArrivalPoint, from: self, into: &trip)
    keep(\.pickupTime, from: self, into: &trip)
    keep(\.intermediateDestinationsVersion, from: self, into: &trip)
    if response.intermediateDestinations.isEmpty
      && !Self.versionChanged(
        response.intermediateDestinationsVersion, from: intermediateDestinationsVersion)
    {
      trip.intermediateDestinations = intermediateDestinations
    }
    keep(\.intermediateDestinationIndex, from: self, into: &trip, when: { $0 == 0 })
    keep(\.actualIntermediateDestinationArrivalPoints, from: self, into: &trip, when: \.isEmpty)
    keep(\.actualIntermediateDestinations, from: self, into: &trip, when: \.isEmpty)
    keep(\.dropoffPoint, from: self, into: &trip)
    keep(\.actualDropoffPoint, from: self, into: &trip)
    keep(\.dropoffTime, from: self, into: &trip)
    mergeWaypoints(response, into: &trip)
    keep(\.vehicleWaypoints, from: self, into: &trip, when: \.isEmpty)
    mergeRoute(response, into: &trip)
    keep(\.currentRouteSegmentEndPoint, from: self, into: &trip)
    keep(\.remainingDistanceMeters, from: self, into: &trip)
    keep(\.etaToFirstWaypoint, from: self, into: &trip)
    keep(\.remainingTimeToFirstWaypoint, from: self, into: &trip)
    keep(\.numberOfPassengers, from: self, into: &trip, when: { $0 == 0 })
    keep(\.lastLocation, from: self, into: &trip)
    keep(\.view, from: self, into: &trip, when: { $0 == .unspecified })
    keep(\.attributes, from: self, into: &trip, when: \.isEmpty)
    return trip
  }

  /// The route, its encoded form and its traffic: kept unless their version moved.
  private func mergeRoute(_ response: FleetEngine.Trip, into trip: inout FleetEngine.Trip) {
    keep(\.currentRouteSegmentVersion, from: self, into: &trip)
    let routeChanged = Self.versionChanged(
      response.currentRouteSegmentVersion, from: currentRouteSegmentVersion)
    if response.route.isEmpty && !routeChanged { trip.route = route }
    if response.currentRouteSegment.isEmpty && !routeChanged {
      trip.currentRouteSegment = currentRouteSegment
    }
    keep(\.currentRouteSegmentTrafficVersion, from: self, into: &trip)
    if response.currentRouteSegmentTraffic == nil
      && !Self.versionChanged(
        response.currentRouteSegmentTrafficVersion, from: currentRouteSegmentTrafficVersion)
    {
      trip.currentRouteSegmentTraffic = currentRouteSegmentTraffic
    }
  }

  /// The remaining waypoints: always sent by GetTrip, but the paths and traffic inside them
  /// only when `remaining_waypoints_route_version` moved; those are filled in from the
  /// matching waypoint (same trip, type and location) we already had.
  private func mergeWaypoints(_ response: FleetEngine.Trip, into trip: inout FleetEngine.Trip) {
    keep(\.remainingWaypointsVersion, from: self, into: &trip)
    keep(\.remainingWaypointsRouteVersion, from: self, into: &trip)
    if response.remainingWaypoints.isEmpty {
      if !Self.versionChanged(response.remainingWaypointsVersion, from: remainingWaypointsVersion) {
        trip.remainingWaypoints = remainingWaypoints
      }
      return
    }
    guard
      !Self.versionChanged(
        response.remainingWaypointsRouteVersion, from: remainingWaypointsRouteVersion)
    else { return }
    for index in trip.remainingWaypoints.indices {
      let waypoint = trip.remainingWaypoints[index]
      guard waypoint.pathToWaypoint.isEmpty, waypoint.encodedPathToWaypoint.isEmpty,
        waypoint.trafficToWaypoint == nil,
        let held = remainingWaypoints.first(where: {
          $0.tripID == waypoint.tripID && $0.waypointType == waypoint.waypointType
            && $0.location == waypoint.location
        })
      else { continue }
      trip.remainingWaypoints[index].pathToWaypoint = held.pathToWaypoint
      trip.remainingWaypoints[index].encodedPathToWaypoint = held.encodedPathToWaypoint
      trip.remainingWaypoints[index].trafficToWaypoint = held.trafficToWaypoint
    }
  }

  /// Whether a response's version says its part changed: it carries a version, and not the
  /// one we hold. No version at all means the part was not sent.
  private static func versionChanged(
    _ new: GoogleProtobuf.Timestamp?, from held: GoogleProtobuf.Timestamp?
  ) -> Bool {
    guard let new else { return false }
    return new != held
  }
}

/// Copies `self[keyPath]` of `held` into `trip` when the response left it out (nil).
private func keep<Value>(
  _ keyPath: WritableKeyPath<FleetEngine.Trip, Value?>, from held: FleetEngine.Trip,
  into trip: inout FleetEngine.Trip
) {
  if trip[keyPath: keyPath] == nil { trip[keyPath: keyPath] = held[keyPath: keyPath] }
}

/// Copies `held[keyPath]` into `trip` when the response's value means "left out".
private func keep<Value>(
  _ keyPath: WritableKeyPath<FleetEngine.Trip, Value>, from held: FleetEngine.Trip,
  into trip: inout FleetEngine.Trip, when absent: (Value) -> Bool
) {
  if absent(trip[keyPath: keyPath]) { trip[keyPath: keyPath] = held[keyPath: keyPath] }
}
