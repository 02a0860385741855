/// What a stop of a vehicle's plan is for.
enum StopKind: UInt8, Sendable {
  /// Where the vehicle sets off (or where it was when its plan changed); no waypoint.
  case vehicleStart
  case pickup
  case intermediateDestination
  case dropoff
}

/// One stop of a vehicle's plan: its kind and the trip it is for.
struct StopRole: Hashable, Sendable {
  var kind: StopKind
  /// The trip's ID (the last component of its name).
  var tripID: String
}

/// Whose each stop of a plan is, when the plan's vehicle serves more than one trip: a shared
/// ride, or a plan that once did and kept its past.
///
/// Two trips that share a vehicle hold the same route and timeline, each with its own
/// `SharedStops` naming which trip the plan is the view of (``ownTripID``). A class, so that
/// a plan of one trip — nearly all of them — pays one nil reference for it.
final class SharedStops: Sendable {
  /// The role of each stop, the vehicle's start included.
  let roles: [StopRole]
  /// The trip whose plan this is.
  let ownTripID: String

  init(roles: [StopRole], ownTripID: String) {
    self.roles = roles
    self.ownTripID = ownTripID
  }

  /// The same stops seen from trip `tripID`.
  func seen(by tripID: String) -> SharedStops {
    SharedStops(roles: roles, ownTripID: tripID)
  }

  /// Whether stop `stop` is one of the plan's own trip (the vehicle's start is nobody's).
  func isOwn(_ stop: Int) -> Bool {
    roles[stop].kind != .vehicleStart && roles[stop].tripID == ownTripID
  }

  /// The index of the own trip's stop of kind `kind`; nil when the plan has none.
  func ownStop(_ kind: StopKind) -> Int? {
    roles.indices.first { roles[$0].kind == kind && roles[$0].tripID == ownTripID }
  }
}
