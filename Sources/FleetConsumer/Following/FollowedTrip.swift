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
  /// The field digests of the last answer when `trip` is that answer merged (see
  /// ``received(bytes:current:ownTripID:hidesOtherTrips:digesting:)``); empty otherwise, which
  /// leaves nothing out.
  private var digests = TripWireDigests()

  /// `bytes`, a serialized `Trip`, merged when `current`: only what changed is decoded. Nil
  /// (and no change) when not `current`. With `digesting`, the fields whose bytes are those
  /// of the last answer merged are left out before unpacking (``TripWireDigests``), as they
  /// would change nothing; without, the answer is unpacked whole and the digests forgotten.
  ///
  /// `ownTripID` is the followed trip's ID, for `hidesOtherTrips` (empty: hide nothing).
  /// Throws what unpacking `bytes` whole would, and then changes nothing.
  mutating func received(
    bytes: UnsafeRawBufferPointer, current: Bool, ownTripID: String, hidesOtherTrips: Bool,
    digesting: Bool = true
  ) throws(ProtoDecodingError) -> TripChanges? {
    let hides = hidesOtherTrips && FleetEngine.Trip.namesOtherTrips(bytes, ownTripID: ownTripID)
    var scan = TripWireDigests.Scan()
    let scanned = digesting && scan.read(bytes)
    // Digests are kept only for an answer merged as sent, which names no other trip: so the
    // fields an answer leaves out never name one either, and one that does is merged whole.
    if scanned, trip != nil, current, !hides {
      let leftOut = scan.unchanged(since: digests)
      if !leftOut.isEmpty, let changes = mergedLeavingOut(leftOut, of: bytes) {
        digests.update(from: &scan)
        return changes
      }
    }
    if !digesting {
      // The trip no longer is the last poll's answer merged.
      digests = TripWireDigests()
    }
    let changes = try FleetEngine.Trip.withUnpacked(bytes) {
      (c) throws(ProtoDecodingError) -> TripChanges? in
      guard current else { return nil }
      let otherNext = hides ? try OtherTripsNextStop(bytes: bytes, ownTripID: ownTripID) : nil
      return try merged(c, ownTripID: ownTripID, hides: hides, otherNext: otherNext)
    }
    if changes != nil {
      // Kept while the trip is the answer merged as sent, not with other trips' stops hidden.
      if scanned && !hides { digests.update(from: &scan) } else { digests = TripWireDigests() }
    }
    return changes
  }

  /// `bytes` merged with the fields in `leftOut` left out; nil when it is to be merged whole:
  /// when the merge failed (a merge that throws changes nothing; whole, the answer fails with
  /// the error unpacking all of it gives).
  private mutating func mergedLeavingOut(
    _ leftOut: TripWireDigests.LeftOut, of bytes: UnsafeRawBufferPointer
  ) -> TripChanges? {
    do {
      return try TripWireDigests.withFields(of: bytes, leavingOut: leftOut) {
        (fields) throws(ProtoDecodingError) in
        try FleetEngine.Trip.withUnpacked(fields) {
          (c) throws(ProtoDecodingError) -> TripChanges? in
          try merged(c, ownTripID: "", hides: false, keepingWaypoints: leftOut.waypoints)
        }
      }
    } catch {
      return nil
    }
  }

  /// `response` merged into the trip, other trips' stops hidden when `hides` (the next stop
  /// being another trip's when `otherNext`): what changed.
  private mutating func merged(
    _ response: UnsafePointer<FleetEngine.Trip.CMessage>, ownTripID: String, hides: Bool,
    otherNext: OtherTripsNextStop? = nil, keepingWaypoints kept: UInt64 = 0
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
