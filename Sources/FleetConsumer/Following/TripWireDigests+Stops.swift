// A remaining waypoint's stop, read from its bytes: where the digests hash it, and what a poll's
// answer sends of a waypoint whose stop it repeats (``TripWireDigests/LeftOut/stops``).

extension TripWireDigests {
  /// Where the stop of `payload`, a serialized `TripWaypoint`, lies: `location` (1), `trip_id`
  /// (2) and `waypoint_type` (3), one run of occurrences (empty when none); and whether it
  /// sends no path (`path_to_waypoint` 4, a non-empty `encoded_path_to_waypoint` 5,
  /// `traffic_to_waypoint` 10). Nil when its fields do not parse or the stop is not one run.
  static func waypointParts(_ payload: UnsafeRawBufferPointer) -> (stop: Range<Int>, bare: Bool)? {
    var stop: Range<Int>? = nil
    var afterStop = false
    var bare = true
    var offset = 0
    while offset < payload.count {
      guard let field = TopLevel.next(in: payload, at: &offset) else { return nil }
      switch field.number {
      case 1, 2, 3:
        guard !afterStop else { return nil }
        stop = (stop?.lowerBound ?? field.occurrence.lowerBound)..<field.occurrence.upperBound
      case 5:
        if stop != nil { afterStop = true }
        if !field.payload.isEmpty { bare = false }
      default:
        if stop != nil { afterStop = true }
        if field.number == 4 || field.number == 10 { bare = false }
      }
    }
    return (stop ?? 0..<0, bare)
  }

  /// Writes `field`, a remaining waypoint of `bytes`, less its stop, at `offset` of
  /// `buffer`: the number of bytes written, never more than the occurrence's.
  static func writeWithoutStop(
    _ bytes: UnsafeRawBufferPointer, _ field: TopLevel.Field,
    into buffer: UnsafeMutableRawBufferPointer, at offset: Int
  ) -> Int {
    let payload = UnsafeRawBufferPointer(rebasing: bytes[field.payload])
    // The scan read these parts when it set the waypoint's bit.
    let stop = waypointParts(payload)!.stop
    var length = offset
    func put(_ byte: UInt8) {
      buffer[length] = byte
      length += 1
    }
    // Field 16, wire type 2 (0x82 0x01): no longer than any key of field 16.
    put(0x82)
    put(0x01)
    var size = UInt64(payload.count - stop.count)
    while size >= 0x80 {
      put(UInt8(truncatingIfNeeded: size) | 0x80)
      size >>= 7
    }
    put(UInt8(size))
    func copy(_ part: Slice<UnsafeRawBufferPointer>) {
      UnsafeMutableRawBufferPointer(rebasing: buffer[length...])
        .copyMemory(from: UnsafeRawBufferPointer(rebasing: part))
      length += part.count
    }
    copy(payload[..<stop.lowerBound])
    copy(payload[stop.upperBound...])
    return length - offset
  }
}
