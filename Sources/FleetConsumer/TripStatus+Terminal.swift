public import FleetProtos

extension FleetEngine.TripStatus {
  /// Whether the trip is over: COMPLETE or CANCELED. A model stops following after it has
  /// delivered one of these.
  public var isTerminal: Bool {
    switch self {
    case .complete, .canceled: true
    case .unknownTripStatus, .new, .enrouteToPickup, .arrivedAtPickup,
      .arrivedAtIntermediateDestination, .enrouteToIntermediateDestination, .enrouteToDropoff,
      .unrecognized:
      false
    }
  }
}
