/// A keyed 64-bit hash of the bytes of each top-level field of the last `GetTrip` answer
/// merged into a followed trip, so that the next answer's fields whose bytes did not change
/// are left out before it is unpacked: they would decode to what the trip holds already, and
/// the merge keeps what an answer leaves out (``FleetEngine/Trip/merge(_:sent:)``).
///
/// A poll's answer usually changes three fields (the vehicle's location, the remaining
/// waypoints' times, the time to the first one) of the twenty-odd it carries; the rest
/// cost unpacking and comparing on every poll without this.
///
/// Only fields 1...63 are hashed; an answer whose fields are not in the order protobuf
/// serializers write them (ascending field numbers, each field's occurrences together), or
/// whose top level does not parse, has no digests and is unpacked whole. The hash is keyed at
/// random per process; a changed field taken for unchanged has a chance of about 2⁻⁶⁴.
struct TripWireDigests {
  /// Nil until an answer is known: nothing is left out of the next one.
  private var storage: Storage?

  /// The hashes in one allocation (a followed trip keeps them between polls): one per
  /// recorded field, by ascending field number, then one per remaining waypoint, then one
  /// per remaining waypoint's stop.
  private final class Storage: ManagedBuffer<Storage.Header, UInt64> {
    struct Header {
      /// Bit n: field n was recorded.
      var present: UInt64
      var waypoints: Int
      /// Bit i: the stop of waypoint i was hashed (``Scan/stopHashed``).
      var stopHashed: UInt64
    }

    static func make(fields: Int, waypoints: Int) -> Storage {
      let buffer = create(minimumCapacity: fields + 2 * waypoints) { _ in
        Header(present: 0, waypoints: waypoints, stopHashed: 0)
      }
      return unsafeDowncast(buffer, to: Storage.self)
    }
  }

  /// No answer known: nothing is left out of the next one.
  init() {}

  /// Takes `scan`'s digests, in place when it has as many fields and waypoints as these.
  mutating func update(from scan: inout Scan) {
    let fields = scan.present.nonzeroBitCount
    let waypoints = max(scan.waypointCount, 0)
    // Uniqueness is asked before the storage is bound to a name, which would be a second
    // reference: the check would then fail every time, and each poll allocate anew.
    if isKnownUniquelyReferenced(&storage),
      storage!.header.present.nonzeroBitCount == fields, storage!.header.waypoints == waypoints
    {
      // The same shape as the last answer's, as nearly every poll's is.
    } else {
      storage = Storage.make(fields: fields, waypoints: waypoints)
    }
    storage!.withUnsafeMutablePointers { header, hashes in
      header.pointee.present = scan.present
      header.pointee.stopHashed = scan.stopHashed
      var remaining = scan.present
      var index = 0
      while remaining != 0 {
        hashes[index] = scan.hashes[remaining.trailingZeroBitCount]
        remaining &= remaining - 1
        index += 1
      }
      for waypoint in 0..<waypoints {
        hashes[fields + waypoint] = scan.waypointHashes[waypoint]
        hashes[fields + waypoints + waypoint] = scan.stopHashes[waypoint]
      }
    }
  }

  /// What may be left out of an answer: whole fields (bit n: field n), single remaining
  /// waypoints (bit i: the waypoint at index i, the same as the held one there) and the stops
  /// of others (bit i: the waypoint at index i sends no path, and its stop, its `location`,
  /// `trip_id` and `waypoint_type`, is the held one's there); and, of those not left out, the
  /// fields whose bytes are the last answer's (bit n: field n): they decode to the held value.
  struct LeftOut {
    var fields: UInt64
    var waypoints: UInt64
    var stops: UInt64 = 0
    var sameBytes: UInt64 = 0
    var isEmpty: Bool { fields == 0 && waypoints == 0 && stops == 0 }
  }

  /// The digests of one answer, on the stack: one hash per field of ``mergedAlone`` (all
  /// numbered below 36). Passed by reference on the poll path: it is about 430 bytes.
  struct Scan {
    fileprivate var present: UInt64 = 0
    fileprivate var hashes = InlineArray<36, UInt64>(repeating: 0)
    /// The remaining waypoints' hashes, each waypoint's own; -1 count: too many to keep.
    fileprivate static let waypointLimit = 16
    fileprivate var waypointHashes = InlineArray<16, UInt64>(repeating: 0)
    /// Each waypoint's stop (``TripWireDigests/waypointParts(_:)``) where bit i of
    /// `stopHashed` is set; bit i of `bare`: waypoint i sends no path.
    fileprivate var stopHashes = InlineArray<16, UInt64>(repeating: 0)
    fileprivate var stopHashed: UInt64 = 0
    fileprivate var bare: UInt64 = 0
    fileprivate var waypointCount = 0

    /// No digests yet: ``read(_:)`` fills them in.
    init() {}

    /// Reads the digests of `bytes`, a serialized `Trip`, into this empty scan; false (and
    /// digests not to be used) when its top level does not parse or is not in serializer
    /// order.
    mutating func read(_ bytes: UnsafeRawBufferPointer) -> Bool {
      var offset = 0
      // The field whose occurrences run from `runStart` to `offset`.
      var current = 0
      var runStart = 0
      while offset < bytes.count {
        let start = offset
        guard let field = TopLevel.next(in: bytes, at: &offset) else { return false }
        let number = field.number
        if number == 16 { recordWaypoint(bytes, field) }
        guard number != current else { continue }
        // A field seen before, after another: not serializer order.
        guard number > current else { return false }
        record(current, bytes, runStart..<start)
        current = number
        runStart = start
      }
      record(current, bytes, runStart..<offset)
      return true
    }

    private mutating func record(
      _ number: Int, _ bytes: UnsafeRawBufferPointer, _ run: Range<Int>
    ) {
      // Only fields that may be left out are kept (and so compared).
      guard number > 0, number < 36, TripWireDigests.mergedAlone & (1 << UInt64(number)) != 0
      else { return }
      present |= 1 << UInt64(number)
      hashes[number] = FieldHasher.hash(UnsafeRawBufferPointer(rebasing: bytes[run]))
    }

    private mutating func recordWaypoint(_ bytes: UnsafeRawBufferPointer, _ field: TopLevel.Field) {
      guard waypointCount >= 0 else { return }
      guard waypointCount < Self.waypointLimit else {
        waypointCount = -1
        return
      }
      waypointHashes[waypointCount] = FieldHasher.hash(
        UnsafeRawBufferPointer(rebasing: bytes[field.occurrence]))
      let payload = UnsafeRawBufferPointer(rebasing: bytes[field.payload])
      if field.wireType == 2, let parts = TripWireDigests.waypointParts(payload) {
        let bit: UInt64 = 1 << UInt64(waypointCount)
        stopHashes[waypointCount] = FieldHasher.hash(
          UnsafeRawBufferPointer(rebasing: payload[parts.stop]))
        stopHashed |= bit
        if parts.bare { bare |= bit }
      }
      waypointCount += 1
    }

    /// The fields of this answer that may be left out, the last answer merged having had
    /// `held`: those whose bytes are the same, except where the merge reads a field with
    /// another that changed (a versioned part whose version moved); never a scalar
    /// (``mergedAlone``).
    func unchanged(since held: TripWireDigests) -> LeftOut {
      guard let storage = held.storage else { return LeftOut(fields: 0, waypoints: 0) }
      return storage.withUnsafeMutablePointers { header, heldHashes in
        let fields = header.pointee.present.nonzeroBitCount
        let waypoints = header.pointee.waypoints
        return unchanged(
          heldPresent: header.pointee.present, heldHashes,
          heldWaypoints: UnsafeBufferPointer(start: heldHashes + fields, count: waypoints),
          heldStops: UnsafeBufferPointer(start: heldHashes + fields + waypoints, count: waypoints),
          heldStopHashed: header.pointee.stopHashed)
      }
    }

    private func unchanged(
      heldPresent: UInt64, _ heldHashes: UnsafePointer<UInt64>,
      heldWaypoints: UnsafeBufferPointer<UInt64>, heldStops: UnsafeBufferPointer<UInt64>,
      heldStopHashed: UInt64
    ) -> LeftOut {
      var same: UInt64 = 0
      // The held hashes are in field order: walked with the held fields' bits.
      var remaining = heldPresent
      var index = 0
      while remaining != 0 {
        let number = remaining.trailingZeroBitCount
        remaining &= remaining - 1
        let bit: UInt64 = 1 << UInt64(number)
        if present & bit != 0, hashes[number] == heldHashes[index] { same |= bit }
        index += 1
      }
      // Absent from both is unchanged too.
      let steady = same | (~present & ~heldPresent)
      var leftOut = same & TripWireDigests.mergedAlone
      // Each version, and the fields the merge reads with it: a field is left out only while
      // its version stays the same (an absent part after its version moved means an empty
      // one).
      @inline(__always) func keep(_ parts: UInt64, unless version: Int) {
        if steady & (1 << UInt64(version)) == 0 { leftOut &= ~parts }
      }
      // current_route_segment_version: route, current_route_segment.
      keep(1 << 9 | 1 << 21, unless: 17)
      // current_route_segment_traffic_version: current_route_segment_traffic.
      keep(1 << 28, unless: 30)
      // remaining_waypoints_version and remaining_waypoints_route_version:
      // remaining_waypoints.
      keep(1 << 16, unless: 19)
      keep(1 << 16, unless: 29)
      // intermediate_destinations_version: intermediate_destinations (their index is a
      // scalar, never left out).
      keep(1 << 14, unless: 25)
      var result = LeftOut(fields: leftOut, waypoints: 0)
      result.sameBytes = same
      sameWaypoints(
        heldWaypoints, heldStops, heldStopHashed, steady: steady, leftOut, into: &result)
      if sendsStop(result) {
        // Decoded with the trip's own stops, so that its locations share their storage, as
        // decoding a whole trip does (``ProtoMessage``'s decode shares repeated stops): the
        // stops are then taken as decoded, not kept.
        let stops: UInt64 = 1 << 5 | 1 << 7 | 1 << 14
        result.fields &= ~stops
        result.sameBytes &= ~stops
      }
      return result
    }

    /// Whether what `leftOut` leaves of this answer sends a stop: a remaining waypoint with
    /// its stop, or the current route segment's end point.
    private func sendsStop(_ leftOut: LeftOut) -> Bool {
      if present & ~leftOut.fields & (1 << 24) != 0 { return true }
      guard present & ~leftOut.fields & (1 << 16) != 0 else { return false }
      guard waypointCount >= 0 else { return true }
      let all: UInt64 = waypointCount >= 64 ? ~0 : (1 << UInt64(waypointCount)) - 1
      return all & ~(leftOut.waypoints | leftOut.stops) != 0
    }

    /// The remaining waypoints (by index) with the bytes of the held answer's waypoint at the
    /// same index, when the list as a whole is not left out and its versions stay the same:
    /// merging one gives the held waypoint at that index again. Of the others, those that
    /// send no path and the bytes of the held answer's stop at their index: their stop is
    /// the held waypoint's.
    private func sameWaypoints(
      _ held: UnsafeBufferPointer<UInt64>, _ heldStops: UnsafeBufferPointer<UInt64>,
      _ heldStopHashed: UInt64, steady: UInt64, _ leftOut: UInt64, into result: inout LeftOut
    ) {
      let versions: UInt64 = 1 << 19 | 1 << 29
      guard leftOut & (1 << 16) == 0, steady & versions == versions, waypointCount > 0 else {
        return
      }
      for index in 0..<min(waypointCount, held.count) {
        let bit: UInt64 = 1 << UInt64(index)
        if waypointHashes[index] == held[index] {
          result.waypoints |= bit
        } else if bare & stopHashed & heldStopHashed & bit != 0,
          stopHashes[index] == heldStops[index]
        {
          result.stops |= bit
        }
      }
    }
  }

  /// Calls `body` with `bytes` (a serialized `Trip`) less the occurrences of the fields and
  /// the remaining waypoints in `leftOut`, and less the stops of the waypoints in
  /// `leftOut.stops`, copied into a temporary buffer.
  /// `bytes` must be the bytes a ``Scan`` was made of.
  static func withFields<R>(
    of bytes: UnsafeRawBufferPointer, leavingOut leftOut: LeftOut,
    _ body: (UnsafeRawBufferPointer) throws(ProtoDecodingError) -> R
  ) throws(ProtoDecodingError) -> R {
    // withUnsafeTemporaryAllocation's body cannot throw a typed error.
    let result: Result<R, ProtoDecodingError> =
      withUnsafeTemporaryAllocation(byteCount: max(bytes.count, 1), alignment: 1) { buffer in
        var offset = 0
        var length = 0
        var waypoint = 0
        while offset < bytes.count {
          let start = offset
          guard let field = TopLevel.next(in: bytes, at: &offset) else { break }
          let number = field.number
          if number < 64, leftOut.fields & (1 << UInt64(number)) != 0 { continue }
          if number == 16 {
            defer { waypoint += 1 }
            if waypoint < 64, leftOut.waypoints & (1 << UInt64(waypoint)) != 0 { continue }
            if waypoint < 64, leftOut.stops & (1 << UInt64(waypoint)) != 0 {
              length += writeWithoutStop(bytes, field, into: buffer, at: length)
              continue
            }
          }
          let part = UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
          UnsafeMutableRawBufferPointer(rebasing: buffer[length...]).copyMemory(from: part)
          length += part.count
        }
        do throws(ProtoDecodingError) {
          return .success(try body(UnsafeRawBufferPointer(rebasing: buffer[..<length])))
        } catch {
          return .failure(error)
        }
      }
    return try result.get()
  }

  /// Fields of `Trip` (trips.proto) that may be left out when their bytes repeat: the
  /// message, string and list fields, which the merge reads on their own. Not the scalars
  /// (`trip_status` 3, `trip_type` 4, `number_of_passengers` 10,
  /// `intermediate_destination_index` 15, `last_location_snappable` 26, `view` 31): they
  /// cost nothing to unpack and compare, and an absent `last_location_snappable` reads as
  /// false. A field added to trips.proto is not in it, and is therefore always unpacked.
  fileprivate static let mergedAlone: UInt64 = [
    1, 2, 5, 6, 7, 8, 9, 11, 12, 13, 14, 16, 17, 19, 20, 21, 22, 23, 24, 25, 27, 28, 29, 30,
    32, 33, 34, 35,
  ].reduce(0) { $0 | 1 << UInt64($1) }
}

/// A 64-bit hash of a run of bytes, keyed by a random number drawn once per process:
/// xxHash64's round on each 8-byte word, and its final mix. Not Swift's `Hasher`: its setup
/// and SipHash rounds, per field, were 2.2 % of the client's samples at 8,000 trips.
private enum FieldHasher {
  private static let key = UInt64.random(in: .min ... .max)
  private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
  private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F

  static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var state = key
    @inline(__always) func mix(_ word: UInt64) {
      state = (state ^ (word &* prime2)).rotated(by: 31) &* prime1
    }
    var offset = 0
    while offset + 8 <= bytes.count {
      mix(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
      offset += 8
    }
    var tail: UInt64 = 0
    for index in offset..<bytes.count {
      tail |= UInt64(bytes[index]) << UInt64(8 * (index - offset))
    }
    mix(tail)
    var hash = state ^ UInt64(bytes.count)
    hash ^= hash >> 33
    hash &*= prime2
    hash ^= hash >> 29
    hash &*= 0x1656_67B1_9E37_79F9
    hash ^= hash >> 32
    return hash
  }
}

extension UInt64 {
  fileprivate func rotated(by bits: UInt64) -> UInt64 { self << bits | self >> (64 - bits) }
}
