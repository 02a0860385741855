internal import FleetProtos
internal import ProtoRuntime

/// What the answer's bytes tell of each field the merge reads (``TripWireDigests/LeftOut``):
/// a field whose bytes are those of the answer the held trip was merged from decodes to the
/// held value bit for bit, so the held value is kept (its storage shared); any other field
/// the answer sends is taken as decoded. Without digests (a whole answer) nothing is known to
/// be the same, and every field sent is taken.
struct SentBytes {
  /// Bit n: field n's bytes are the held answer's.
  let same: UInt64
  /// Bit i: remaining waypoint i was left out, the held one at index i.
  let keptWaypoints: UInt64
  /// Bit i: remaining waypoint i was sent without its stop, which is the held one's at i.
  let keptStops: UInt64

  init(_ sent: TripWireDigests.LeftOut) {
    same = sent.sameBytes
    keptWaypoints = sent.waypoints
    keptStops = sent.stops
  }

  @inline(__always)
  func isSame(_ number: Int) -> Bool { same & (1 << UInt64(number)) != 0 }

  /// The answer's message when it sends one that is not the held one; nil keeps the held one.
  @inline(__always)
  func changed<M: ProtoMessage>(_ sent: M?, _ held: M?, _ number: Int) -> M? {
    guard let sent, !isSame(number) else { return nil }
    return sent
  }

  /// The answer's version when it sends one that is not the held one, compared by value: a
  /// `Timestamp` holds integers only, so `==` is exact. Nil keeps the held one, and says the
  /// versioned part did not change.
  @inline(__always)
  func version(_ sent: GoogleProtobuf.Timestamp?, _ held: GoogleProtobuf.Timestamp?)
    -> GoogleProtobuf.Timestamp?
  {
    guard let sent, sent != held else { return nil }
    return sent
  }

  /// The answer's string when it sends one (not empty; or empty, when `orEmptyWhen`) that is
  /// not the held one.
  @inline(__always)
  func changed(
    _ sent: String, _ held: String, _ number: Int, orEmptyWhen versionChanged: Bool = false
  ) -> String? {
    guard !sent.isEmpty || versionChanged, !isSame(number) else { return nil }
    // Empty on both sides: nothing to take.
    guard !sent.isEmpty || !held.isEmpty else { return nil }
    return sent
  }

  /// The answer's list when it sends one (not empty; or empty, when `orEmptyWhen`) that is
  /// not the held one.
  @inline(__always)
  func changed<M>(
    _ sent: [M], _ held: [M], _ number: Int, orEmptyWhen versionChanged: Bool = false
  ) -> [M]? {
    guard !sent.isEmpty || versionChanged, !isSame(number) else { return nil }
    guard !sent.isEmpty || !held.isEmpty else { return nil }
    return sent
  }
}

extension TripMergePlan {
  /// The route, its encoded form and its traffic of `r`, merged into `held`'s: kept unless
  /// their version moved.
  mutating func mergeRoute(of r: FleetEngine.Trip, into held: FleetEngine.Trip, _ bytes: SentBytes) {
    currentRouteSegmentVersion = bytes.version(
      r.currentRouteSegmentVersion, held.currentRouteSegmentVersion)
    let moved = currentRouteSegmentVersion != nil
    route = bytes.changed(r.route, held.route, 9, orEmptyWhen: moved)
    currentRouteSegment = bytes.changed(
      r.currentRouteSegment, held.currentRouteSegment, 21, orEmptyWhen: moved)
    currentRouteSegmentTrafficVersion = bytes.version(
      r.currentRouteSegmentTrafficVersion, held.currentRouteSegmentTrafficVersion)
    let traffic = r.currentRouteSegmentTraffic
    // Absent while its version stays: kept. Absent after it moved: gone (unless none held).
    if traffic != nil || currentRouteSegmentTrafficVersion != nil, !bytes.isSame(28),
      traffic != nil || held.currentRouteSegmentTraffic != nil
    {
      currentRouteSegmentTraffic = .some(traffic)
    }
  }
}
