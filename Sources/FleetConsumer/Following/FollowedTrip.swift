internal import FleetProtos
@_spi(GeneratedCode) internal import ProtoRuntime

/// The trip a follow loop has merged from its answers, and how to fold the next answer in:
/// the wire scan that leaves out fields whose bytes did not change (``TripWireDigests``), the
/// merge in place (``FleetEngine/Trip/merge(cMessage:keepingWaypoints:)``) and the hiding of
/// other trips' stops.
///
/// Held by ``TripFollower``, which decides whether an answer is for the call in flight (its
/// follow policy) and passes that down as `current`: an answer that is not current changes
/// nothing, and gives nil, once it has been unpacked (an undecodable one still throws).
struct FollowedTrip {
  /// The merged trip, nil before the first successful response.
  private(set) var trip: FleetEngine.Trip?
  /// The field digests of the last poll's answer when `trip` is that answer merged (see
  /// ``received(bytes:current:ownTripID:hidesOtherTrips:)``); empty otherwise, which leaves
  /// nothing out.
  private var digests = TripWireDigests()

  /// `response`, read in place from protobuf-c's unpacked message, merged when `current`:
  /// only what changed is decoded. Nil (and no change) when not `current`.
  ///
  /// `ownTripID` is the followed trip's ID, for `hidesOtherTrips` (empty: hide nothing).
  /// Throws, and changes nothing, when the response does not decode.
  mutating func received(
    cMessage response: UnsafePointer<FleetEngine.Trip.CMessage>, current: Bool, ownTripID: String,
    hidesOtherTrips: Bool
  ) throws(ProtoDecodingError) -> TripChanges? {
    // The trip no longer is the last poll's answer merged.
    digests = TripWireDigests()
    let hides = Self.hidesOtherTrips(response, ownTripID, hidesOtherTrips)
    guard current else { return nil }
    return try merged(response, ownTripID: ownTripID, hides: hides)
  }

  /// `bytes`, a serialized `Trip`: as ``received(cMessage:current:ownTripID:hidesOtherTrips:)``,
  /// but the fields whose bytes are those of the last answer merged are left out before
  /// unpacking (``TripWireDigests``), as they would change nothing. Throws what unpacking
  /// `bytes` whole would.
  mutating func received(
    bytes: UnsafeRawBufferPointer, current: Bool, ownTripID: String, hidesOtherTrips: Bool
  ) throws(ProtoDecodingError) -> TripChanges? {
    var scan = TripWireDigests.Scan()
    let scanned = scan.read(bytes)
    if scanned, trip != nil, current {
      let leftOut = scan.unchanged(since: digests)
      if !leftOut.isEmpty,
        let changes = mergedLeavingOut(
          leftOut, of: bytes, ownTripID: ownTripID, hidesOtherTrips: hidesOtherTrips)
      {
        digests.update(from: &scan)
        return changes
      }
    }
    var hides = false
    let changes = try FleetEngine.Trip.withUnpacked(bytes) {
      (c) throws(ProtoDecodingError) -> TripChanges? in
      hides = Self.hidesOtherTrips(c, ownTripID, hidesOtherTrips)
      guard current else { return nil }
      return try merged(c, ownTripID: ownTripID, hides: hides)
    }
    if changes != nil {
      // Kept while the trip is the answer merged as sent, not with other trips' stops hidden.
      if scanned && !hides { digests.update(from: &scan) } else { digests = TripWireDigests() }
    }
    return changes
  }

  /// `bytes` merged with the fields in `leftOut` left out; nil when it is to be merged whole:
  /// when it names another trip (hiding it reads fields, the first waypoint and its ETA,
  /// that may be left out), or when the merge failed (a merge that throws changes nothing;
  /// whole, the answer fails with the error unpacking all of it gives).
  private mutating func mergedLeavingOut(
    _ leftOut: TripWireDigests.LeftOut, of bytes: UnsafeRawBufferPointer, ownTripID: String,
    hidesOtherTrips: Bool
  ) -> TripChanges? {
    do {
      return try TripWireDigests.withFields(of: bytes, leavingOut: leftOut) {
        (fields) throws(ProtoDecodingError) in
        try FleetEngine.Trip.withUnpacked(fields) {
          (c) throws(ProtoDecodingError) -> TripChanges? in
          guard !Self.hidesOtherTrips(c, ownTripID, hidesOtherTrips) else { return nil }
          return try merged(c, ownTripID: ownTripID, hides: false, keepingWaypoints: leftOut.waypoints)
        }
      }
    } catch {
      return nil
    }
  }

  /// Whether other trips' stops are to be hidden from `response`.
  private static func hidesOtherTrips(
    _ response: UnsafePointer<FleetEngine.Trip.CMessage>, _ ownTripID: String, _ hiding: Bool
  ) -> Bool {
    hiding && FleetEngine.Trip.namesOtherTrips(response, ownTripID: ownTripID)
  }

  /// `response` merged into the trip, other trips' stops hidden when `hides`: what changed.
  private mutating func merged(
    _ response: UnsafePointer<FleetEngine.Trip.CMessage>, ownTripID: String, hides: Bool,
    keepingWaypoints kept: UInt64 = 0
  ) throws(ProtoDecodingError) -> TripChanges {
    if trip != nil && !hides {
      // The usual poll: merged in place, and the merge tells what it changed.
      let changed = try trip!.merge(cMessage: response, keepingWaypoints: kept)
      return TripChanges(changed: changed, in: trip!)
    }
    // The first answer, or one whose waypoints are other trips' to hide: what was reported
    // before, then the answer merged (what did not change keeps its storage, so the
    // comparisons find it unchanged at once) and the other trips hidden.
    let previous = TripChanges.Reported(trip ?? FleetEngine.Trip())
    let otherNext = hides ? try OtherTripsNextStop(response, ownTripID: ownTripID) : nil
    if trip == nil {
      var first = try FleetEngine.Trip(cMessage: response)
      first.shareFirstPathWithRoute()
      first.shareStopLocations(as: response)
      trip = first
    } else {
      try trip!.merge(cMessage: response)
    }
    if hides { trip!.hideOtherTrips(after: otherNext, ownTripID: ownTripID) }
    return TripChanges(from: previous, to: trip!)
  }
}
