@testable import FleetConsumer

// The follower and the merge read responses as protobuf-c leaves them (the calls unpack them
// in place); tests write responses as Swift values. These take a value the way a call would
// hand it over: built into protobuf-c's struct, then read in place.

extension FleetEngine.Trip {
  /// This trip updated with `response`, through ``merge(cMessage:)``.
  func merged(with response: FleetEngine.Trip) -> FleetEngine.Trip {
    var trip = self
    do {
      _ = try response.withCMessage { (c) throws(ProtoDecodingError) in try trip.merge(cMessage: c) }
    } catch {
      preconditionFailure("a trip built in Swift always decodes: \(error)")
    }
    return trip
  }
}

extension TripFollower {
  /// ``received(cMessage:generation:ownTripID:)`` with a Swift response.
  mutating func received(
    _ response: FleetEngine.Trip, generation: UInt64, ownTripID: String = ""
  ) -> OnResponse {
    do {
      return try response.withCMessage { (c) throws(ProtoDecodingError) in
        try received(cMessage: c, generation: generation, ownTripID: ownTripID)
      }
    } catch {
      preconditionFailure("a trip built in Swift always decodes: \(error)")
    }
  }
}
