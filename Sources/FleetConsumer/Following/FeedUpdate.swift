internal import FleetProtos

/// A `TripUpdate` of the trip feed (trip_feed.proto) read from its bytes: the trip's own
/// bytes, which the follower merges (only what changed is decoded), and the update's other
/// fields (`sequence`, `update_time`, unknown ones), checked as decoding them would.
enum FeedUpdate {
  /// `trip`'s field number in `TripUpdate`.
  private static let tripField = 1

  /// Calls `body` with the bytes of the trip in `bytes`, a serialized `TripUpdate` (nil: it
  /// has none), once the update's other fields have decoded. What `body` or decoding throws
  /// comes out as a decode of the whole update would report it: the update's message name and
  /// the size of `bytes`.
  static func withTrip<R>(
    in bytes: UnsafeRawBufferPointer,
    _ body: (UnsafeRawBufferPointer?) throws(ProtoDecodingError) -> R
  ) throws(ProtoDecodingError) -> R {
    do throws(ProtoDecodingError) {
      guard let trip = tripOccurrence(in: bytes) else {
        // A trip sent in several occurrences (protobuf merges them) or a top level that does
        // not parse: decoded whole, the trip then merged from its own encoding.
        let update = try FleetFeed.TripUpdate(serializedBytes: bytes)
        guard let trip = update.trip else { return try body(nil) }
        let encoded = trip.serializedBytes()
        // withUnsafeBytes rethrows untyped; only ProtoDecodingError can come out of `body`.
        do {
          return try encoded.withUnsafeBytes { raw in try body(raw) }
        } catch let error as ProtoDecodingError {
          throw error
        } catch {
          preconditionFailure("body threw \(error), not a ProtoDecodingError")
        }
      }
      guard let occurrence = trip.occurrence else {
        _ = try FleetFeed.TripUpdate(serializedBytes: bytes)
        return try body(nil)
      }
      try checkFields(of: bytes, leavingOut: occurrence)
      return try body(UnsafeRawBufferPointer(rebasing: bytes[trip.payload]))
    } catch {
      throw ProtoDecodingError(
        message: FleetFeed.TripUpdate.protoMessageName, reason: error.reason,
        byteCount: bytes.count)
    }
  }

  /// Where the one occurrence of the trip is (its key, length and contents) and its contents;
  /// `occurrence` nil when there is none. Nil when there are several, or the top level does
  /// not parse.
  private static func tripOccurrence(in bytes: UnsafeRawBufferPointer)
    -> (occurrence: Range<Int>?, payload: Range<Int>)?
  {
    var found: (occurrence: Range<Int>?, payload: Range<Int>) = (nil, 0..<0)
    for field in TopLevel.fields(of: bytes) {
      guard let field else { return nil }
      // A trip of another wire type is left in, for the decode to refuse.
      guard field.number == tripField, field.wireType == 2 else { continue }
      guard found.occurrence == nil else { return nil }
      found = (field.occurrence, field.payload)
    }
    return found
  }

  /// Decodes the update in `bytes` without the bytes in `occurrence` (its trip), for the
  /// errors that decoding gives.
  private static func checkFields(
    of bytes: UnsafeRawBufferPointer, leavingOut occurrence: Range<Int>
  ) throws(ProtoDecodingError) {
    // Usually the trip comes first (serializers write fields by number): the rest is a slice.
    guard occurrence.lowerBound > 0 else {
      _ = try FleetFeed.TripUpdate(
        serializedBytes: UnsafeRawBufferPointer(rebasing: bytes[occurrence.upperBound...]))
      return
    }
    var rest = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[..<occurrence.lowerBound]))
    rest.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[occurrence.upperBound...]))
    _ = try FleetFeed.TripUpdate(serializedBytes: rest)
  }
}
