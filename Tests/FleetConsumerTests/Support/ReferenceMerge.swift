@testable import FleetConsumer

// The merge as it was written before it read protobuf-c's structs in place: a whole decoded
// response merged field by field. Kept as the oracle that `TripMergeEquivalenceTests` holds
// the in-place merge to.

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
  func referenceMerged(with response: FleetEngine.Trip) -> FleetEngine.Trip {
    var trip = self
    trip.referenceMerge(response)
    return trip
  }

  /// Updates this trip in place with `response`, as ``merged(with:)`` describes: field by
  /// field, with no key paths and no copy of the trip (this runs for every poll of every
  /// followed trip).
  mutating func referenceMerge(_ response: FleetEngine.Trip) {
    if !response.name.isEmpty { name = response.name }
    if !response.vehicleID.isEmpty { vehicleID = response.vehicleID }
    if response.tripStatus != .unknownTripStatus { tripStatus = response.tripStatus }
    if response.tripType != .unknownTripType { tripType = response.tripType }
    take(response.pickupPoint, into: &pickupPoint)
    take(response.actualPickupPoint, into: &actualPickupPoint)
    take(response.actualPickupArrivalPoint, into: &actualPickupArrivalPoint)
    take(response.pickupTime, into: &pickupTime)
    let destinationsChanged = Self.versionChanged(
      response.intermediateDestinationsVersion, from: intermediateDestinationsVersion)
    take(response.intermediateDestinationsVersion, into: &intermediateDestinationsVersion)
    if !response.intermediateDestinations.isEmpty || destinationsChanged {
      intermediateDestinations = response.intermediateDestinations
    }
    // 0 is also the first destination's index: taken when the destinations themselves
    // changed (a new list starts again), otherwise it cannot be told from "left out".
    if response.intermediateDestinationIndex != 0 || destinationsChanged {
      intermediateDestinationIndex = response.intermediateDestinationIndex
    }
    if !response.actualIntermediateDestinationArrivalPoints.isEmpty {
      actualIntermediateDestinationArrivalPoints =
        response.actualIntermediateDestinationArrivalPoints
    }
    if !response.actualIntermediateDestinations.isEmpty {
      actualIntermediateDestinations = response.actualIntermediateDestinations
    }
    take(response.dropoffPoint, into: &dropoffPoint)
    take(response.actualDropoffPoint, into: &actualDropoffPoint)
    take(response.dropoffTime, into: &dropoffTime)
    referenceMergeWaypoints(response)
    if !response.vehicleWaypoints.isEmpty { vehicleWaypoints = response.vehicleWaypoints }
    referenceMergeRoute(response)
    take(response.currentRouteSegmentEndPoint, into: &currentRouteSegmentEndPoint)
    take(response.remainingDistanceMeters, into: &remainingDistanceMeters)
    take(response.etaToFirstWaypoint, into: &etaToFirstWaypoint)
    take(response.remainingTimeToFirstWaypoint, into: &remainingTimeToFirstWaypoint)
    if response.numberOfPassengers != 0 { numberOfPassengers = response.numberOfPassengers }
    take(response.lastLocation, into: &lastLocation)
    lastLocationSnappable = response.lastLocationSnappable
    if response.view != .unspecified { view = response.view }
    if !response.attributes.isEmpty { attributes = response.attributes }
    unknownFields = response.unknownFields
    shareFirstPathWithRoute()
  }

  /// The route, its encoded form and its traffic: kept unless their version moved.
  private mutating func referenceMergeRoute(_ response: FleetEngine.Trip) {
    let routeChanged = Self.versionChanged(
      response.currentRouteSegmentVersion, from: currentRouteSegmentVersion)
    let trafficChanged = Self.versionChanged(
      response.currentRouteSegmentTrafficVersion, from: currentRouteSegmentTrafficVersion)
    take(response.currentRouteSegmentVersion, into: &currentRouteSegmentVersion)
    if !response.route.isEmpty || routeChanged { route = response.route }
    if !response.currentRouteSegment.isEmpty || routeChanged {
      currentRouteSegment = response.currentRouteSegment
    }
    take(response.currentRouteSegmentTrafficVersion, into: &currentRouteSegmentTrafficVersion)
    if response.currentRouteSegmentTraffic != nil || trafficChanged {
      currentRouteSegmentTraffic = response.currentRouteSegmentTraffic
    }
  }

  /// The remaining waypoints: always sent by GetTrip, but the paths and traffic inside them
  /// only when `remaining_waypoints_route_version` moved; those are filled in from the
  /// matching waypoint (same trip, type and location) we already had.
  private mutating func referenceMergeWaypoints(_ response: FleetEngine.Trip) {
    let waypointsChanged = Self.versionChanged(
      response.remainingWaypointsVersion, from: remainingWaypointsVersion)
    let pathsChanged = Self.versionChanged(
      response.remainingWaypointsRouteVersion, from: remainingWaypointsRouteVersion)
    take(response.remainingWaypointsVersion, into: &remainingWaypointsVersion)
    take(response.remainingWaypointsRouteVersion, into: &remainingWaypointsRouteVersion)
    if response.remainingWaypoints.isEmpty {
      if waypointsChanged { remainingWaypoints = [] }
      return
    }
    var waypoints = response.remainingWaypoints
    if !pathsChanged {
      for index in waypoints.indices {
        // Field by field through the index: a whole TripWaypoint copy costs a retain per
        // reference it holds.
        guard waypoints[index].pathToWaypoint.isEmpty,
          waypoints[index].encodedPathToWaypoint.isEmpty,
          waypoints[index].trafficToWaypoint == nil,
          let held = remainingWaypoints.firstIndex(where: {
            $0.tripID == waypoints[index].tripID
              && $0.waypointType == waypoints[index].waypointType
              && $0.location == waypoints[index].location
          })
        else { continue }
        waypoints[index].pathToWaypoint = remainingWaypoints[held].pathToWaypoint
        waypoints[index].encodedPathToWaypoint = remainingWaypoints[held].encodedPathToWaypoint
        waypoints[index].trafficToWaypoint = remainingWaypoints[held].trafficToWaypoint
      }
    }
    remainingWaypoints = waypoints
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

/// Takes the response's `value` into `field` unless the response left it out (nil).
@inline(__always)
private func take<Value>(_ value: Value?, into field: inout Value?) {
  if let value { field = value }
}

