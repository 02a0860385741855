internal import FleetProtos

// Shared and back-to-back trips: Fleet Engine's `remaining_waypoints` and `vehicle_waypoints`
// list every stop of the vehicle, other riders' included (Google's guide on retrieving trips
// directly says to filter them before showing a trip to its rider). With
// TripService.Options.hidesOtherTrips on, the held trip keeps only this trip's stops, and
// the next-stop ETA is that of this trip's own next stop.

/// The vehicle's next stop as a response gave it, when that stop is another trip's: the
/// server's ETA there and its time until then. Read before the response is merged.
struct OtherTripsNextStop {
  var eta: GoogleProtobuf.Timestamp?
  var remainingTime: GoogleProtobuf.Duration?

  /// Nil when the first remaining waypoint of `bytes` (a serialized `Trip`) is trip `own`'s,
  /// names no trip, or there is none (or `own` is empty): the usual poll, which then costs a
  /// scan of the top level and a byte comparison. Bytes the scan cannot read may still decode
  /// (protobuf-c keeps field numbers above 0x1FFF_FFFF as unknown fields): for those the
  /// decoded trip tells.
  init?(bytes: UnsafeRawBufferPointer, ownTripID own: String) throws(ProtoDecodingError) {
    guard !own.isEmpty else { return nil }
    guard let id = TripBytes.firstWaypointTripID(of: bytes) else {
      let trip = try FleetEngine.Trip(serializedBytes: bytes)
      guard let first = trip.remainingWaypoints.first, !first.tripID.isEmpty,
        first.tripID != own
      else { return nil }
      eta = trip.etaToFirstWaypoint
      remainingTime = trip.remainingTimeToFirstWaypoint
      return
    }
    guard !id.isEmpty, !TripBytes.same(own, id) else { return nil }
    // Decoded only when the bytes differ: Swift's == also equates other spellings.
    guard let decoded = String(validating: id, as: UTF8.self) else {
      throw ProtoDecodingError(message: "", reason: .invalidUTF8, byteCount: 0)
    }
    guard decoded != own else { return nil }
    eta = try TripBytes.message(13, of: bytes)
    remainingTime = try TripBytes.message(27, of: bytes)
  }
}

extension FleetEngine.Trip {
  /// Whether `bytes`, a serialized `Trip`, may show another trip than `own`: a remaining or
  /// vehicle waypoint names a trip whose ID is not `own` byte for byte. False for the usual
  /// answer, where ``hideOtherTrips(after:ownTripID:)`` would change nothing (nor when `own`
  /// is empty). True for bytes the scan cannot read: they may still decode (protobuf-c keeps
  /// field numbers above 0x1FFF_FFFF as unknown fields), and hiding from the decoded trip is
  /// right for any input.
  static func namesOtherTrips(_ bytes: UnsafeRawBufferPointer, ownTripID own: String) -> Bool {
    guard !own.isEmpty else { return false }
    for field in TopLevel.fields(of: bytes) {
      guard let field else { return true }
      // remaining_waypoints and vehicle_waypoints.
      guard field.number == 16 || field.number == 20, field.wireType == 2 else { continue }
      let waypoint = UnsafeRawBufferPointer(rebasing: bytes[field.payload])
      guard let id = TripBytes.tripID(ofWaypoint: waypoint) else { return true }
      if !id.isEmpty && !TripBytes.same(own, id) { return true }
    }
    return false
  }

  /// Removes other trips' waypoints from `remainingWaypoints` and `vehicleWaypoints` (a
  /// waypoint with no trip ID is kept), right after a response was merged in. When the
  /// response said the vehicle's next stop is another trip's (`otherNext`),
  /// `eta_to_first_waypoint` becomes the ETA of this trip's own first waypoint, and
  /// `remaining_time_to_first_waypoint` the time until then as the server counted it (nil
  /// when the server's values do not tell). Costs a scan of the waypoints when there is
  /// nothing to hide.
  mutating func hideOtherTrips(after otherNext: OtherTripsNextStop?, ownTripID own: String) {
    guard !own.isEmpty else { return }
    @inline(__always) func isOther(_ waypoint: FleetEngine.TripWaypoint) -> Bool {
      let id = waypoint.tripID
      return !id.isEmpty && id != own
    }
    if let otherNext {
      let ownNext = remainingWaypoints.first { !isOther($0) }
      // The server's clock: its ETA at the vehicle's next stop less the time until then.
      // Values outside protobuf's ranges (a broken server) leave the time unknown.
      let serverNow = otherNext.eta?.sinceEpoch.flatMap { eta in
        otherNext.remainingTime?.checked.map { eta - $0 }
      }
      etaToFirstWaypoint = ownNext?.eta
      remainingTimeToFirstWaypoint = ownNext?.eta?.sinceEpoch.flatMap { eta in
        serverNow.map { GoogleProtobuf.Duration(eta - $0) }
      }
    }
    if remainingWaypoints.contains(where: isOther) { remainingWaypoints.removeAll(where: isOther) }
    if vehicleWaypoints.contains(where: isOther) { vehicleWaypoints.removeAll(where: isOther) }
  }
}

extension GoogleProtobuf.Timestamp {
  /// The time since 1970, when within the range protobuf allows (years 1 to 9999).
  fileprivate var sinceEpoch: Duration? {
    guard (-62_135_596_800...253_402_300_799).contains(seconds) else { return nil }
    return .seconds(seconds) + .nanoseconds(Int64(nanos))
  }
}

extension GoogleProtobuf.Duration {
  /// The duration, when within the ±10,000 years protobuf allows.
  fileprivate var checked: Duration? {
    guard (-315_576_000_000...315_576_000_000).contains(seconds) else { return nil }
    return duration
  }
}

/// Fields of a serialized `Trip` (trips.proto) read from its bytes, without unpacking it.
private enum TripBytes {
  /// The trip ID bytes of the first remaining waypoint (field 16), empty when there is none
  /// or it names no trip; nil when the top level or that waypoint does not parse here.
  static func firstWaypointTripID(of trip: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
    var first: UnsafeRawBufferPointer? = nil
    // The whole top level is read, so the fields read next (``message(_:of:)``) parse.
    for field in TopLevel.fields(of: trip) {
      guard let field else { return nil }
      if first == nil, field.number == 16, field.wireType == 2 {
        first = UnsafeRawBufferPointer(rebasing: trip[field.payload])
      }
    }
    guard let first else { return UnsafeRawBufferPointer(start: nil, count: 0) }
    return tripID(ofWaypoint: first)
  }

  /// The bytes of a `TripWaypoint`'s `trip_id` (field 2; the last occurrence, as a decode
  /// keeps), empty when it has none; nil when the waypoint does not parse.
  static func tripID(ofWaypoint waypoint: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
    var id = UnsafeRawBufferPointer(start: nil, count: 0)
    for field in TopLevel.fields(of: waypoint) {
      guard let field else { return nil }
      if field.number == 2, field.wireType == 2 {
        id = UnsafeRawBufferPointer(rebasing: waypoint[field.payload])
      }
    }
    return id
  }

  /// Whether `bytes` are `string`'s UTF-8, byte for byte.
  static func same(_ string: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var string = string
    return string.withUTF8 { $0.count == bytes.count && $0.elementsEqual(bytes) }
  }

  /// Message field `number` of `trip` decoded, nil when absent: its occurrences together, as
  /// protobuf merges them.
  static func message<M: ProtoMessage>(_ number: Int, of trip: UnsafeRawBufferPointer)
    throws(ProtoDecodingError) -> M?
  {
    var contents: [UInt8]? = nil
    for field in TopLevel.fields(of: trip) {
      guard let field else { break }
      if field.number == number, field.wireType == 2 {
        contents = (contents ?? []) + UnsafeRawBufferPointer(rebasing: trip[field.payload])
      }
    }
    guard let contents else { return nil }
    return try M(serializedBytes: contents)
  }
}
