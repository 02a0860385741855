internal import FleetProtos
internal import ProtoRuntime

/// The trip a follow loop has merged from its answers, and how to fold the next answer in:
/// the wire scan that leaves out fields whose bytes did not change (``TripWireDigests``), the
/// decode of what is left, the merge in place (``FleetEngine/Trip/merge(_:sent:)``) and the
/// hiding of other trips' stops.
///
/// Held by ``TripFollower``, which decides whether an answer is for the call in flight (its
/// follow policy) and passes that down as `current`: an answer that is not current changes
/// nothing, and gives nil, once it has been decoded (an undecodable one still throws).
struct FollowedTrip {
  /// The merged trip, nil before the first successful response.
  private(set) var trip: FleetEngine.Trip?
  /// The field digests of the last answer when `trip` is that answer merged (see
  /// ``received(bytes:current:ownTripID:hidesOtherTrips:digesting:)``); empty otherwise, which
  /// leaves nothing out.
  private var digests = TripWireDigests()

  /// `bytes`, a serialized `Trip`, merged when `current`. Nil (and no change) when not
  /// `current`. With `digesting`, the fields whose bytes are those of the last answer merged
  /// are left out before decoding (``TripWireDigests``), as they would change nothing;
  /// without, the answer is decoded whole and the digests forgotten.
  ///
  /// `ownTripID` is the followed trip's ID, for `hidesOtherTrips` (empty: hide nothing).
  /// Throws what decoding `bytes` whole would, and then changes nothing.
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
      let sent = scan.unchanged(since: digests)
      if !sent.isEmpty, let changes = mergedLeavingOut(sent, of: bytes) {
        digests.update(from: &scan)
        return changes
      }
    }
    if !digesting {
      // The trip no longer is the last poll's answer merged.
      digests = TripWireDigests()
    }
    let response = try FleetEngine.Trip(serializedBytes: bytes)
    guard current else { return nil }
    let otherNext = hides ? try OtherTripsNextStop(bytes: bytes, ownTripID: ownTripID) : nil
    let changes = merged(response, ownTripID: ownTripID, hides: hides, otherNext: otherNext)
    // Kept while the trip is the answer merged as sent, not with other trips' stops hidden.
    if scanned && !hides { digests.update(from: &scan) } else { digests = TripWireDigests() }
    return changes
  }

  /// `bytes` merged with what `sent` leaves out left out; nil when it is to be merged whole:
  /// when what is left does not decode (whole, the answer fails with the error decoding all
  /// of it gives).
  private mutating func mergedLeavingOut(
    _ sent: TripWireDigests.LeftOut, of bytes: UnsafeRawBufferPointer
  ) -> TripChanges? {
    let response: FleetEngine.Trip
    do {
      response = try TripWireDigests.withFields(of: bytes, leavingOut: sent) {
        (fields) throws(ProtoDecodingError) in try FleetEngine.Trip(serializedBytes: fields)
      }
    } catch {
      return nil
    }
    return merged(response, ownTripID: "", hides: false, sent: sent)
  }

  /// `response` merged into the trip, other trips' stops hidden when `hides` (the next stop
  /// being another trip's when `otherNext`): what changed.
  private mutating func merged(
    _ response: FleetEngine.Trip, ownTripID: String, hides: Bool,
    otherNext: OtherTripsNextStop? = nil,
    sent: TripWireDigests.LeftOut = TripWireDigests.LeftOut(fields: 0, waypoints: 0)
  ) -> TripChanges {
    if trip != nil && !hides {
      // The usual poll: merged in place, and the merge tells what it changed.
      let changed = trip!.merge(response, sent: sent)
      return TripChanges(changed: changed, in: trip!)
    }
    // The first answer, or one whose waypoints are other trips' to hide: what was reported
    // before, then the answer merged and the other trips hidden. (Decoding shares a trip's
    // repeated paths and long strings: a waypoint at the pickup point holds its place ID.)
    let previous = TripChanges.Reported(trip ?? FleetEngine.Trip())
    if trip == nil {
      var first = response
      first.shareFirstPathWithRoute()
      trip = first
    } else {
      trip!.merge(response)
    }
    if hides { trip!.hideOtherTrips(after: otherNext, ownTripID: ownTripID) }
    return TripChanges(from: previous, to: trip!)
  }
}
