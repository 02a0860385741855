@testable import FleetConsumer

// The follower and the merge read responses as a call hands them over; tests write responses
// as Swift values. These take a value that way: the merge built into protobuf-c's struct and
// read in place, the follower serialized.

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
  /// ``received(bytes:generation:ownTripID:digesting:)`` with a Swift response, unpacked whole
  /// (no digests).
  mutating func received(
    _ response: FleetEngine.Trip, generation: UInt64, ownTripID: String = ""
  ) -> OnResponse {
    do {
      return try response.serializedBytes().withUnsafeBytes { (raw) throws(ProtoDecodingError) in
        try received(bytes: raw, generation: generation, ownTripID: ownTripID, digesting: false)
      }
    } catch {
      preconditionFailure("a trip built in Swift always decodes: \(error)")
    }
  }
}
