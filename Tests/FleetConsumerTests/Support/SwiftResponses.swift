@testable import FleetConsumer

// The follower and the merge read responses as a call hands them over; tests write responses
// as Swift values. These take a value that way: the merge given it decoded from its bytes, the
// follower given its bytes.

extension FleetEngine.Trip {
  /// This trip updated with `response`, serialized and decoded, through ``merge(_:sent:)``.
  func merged(with response: FleetEngine.Trip) -> FleetEngine.Trip {
    var trip = self
    trip.merge(response.decodedAgain())
    return trip
  }

  /// This trip serialized and decoded: what a response built in Swift is on arrival.
  func decodedAgain() -> FleetEngine.Trip {
    do {
      return try FleetEngine.Trip(serializedBytes: serializedBytes())
    } catch {
      preconditionFailure("a trip built in Swift always decodes: \(error)")
    }
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
