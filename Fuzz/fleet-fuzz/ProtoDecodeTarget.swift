import FleetProtos
import FleetProtosFixtures

extension FuzzTarget {
  /// Decode of every Fleet Engine, google.rpc and well-known message, then a re-encode; the
  /// decode straight from the wire held to protobuf-c's unpack of the same bytes.
  ///
  /// Input: a selector byte (index into ``decodedTypes``, modulo their count), then the
  /// message's bytes.
  static let protoDecode = FuzzTarget(
    name: "proto-decode",
    summary:
      "decode of every Fleet Engine/google.rpc message: decode(encode(m)) == m, stable bytes, "
      + "the bytes protobuf-c packs, the straight decode's values and verdicts protobuf-c's",
    seeds: protoSeeds,
    run: fuzzProtoDecode)
}

/// Seeds name their type by index in ``PeerMessageTypes/all``.
private let decodedTypes = PeerMessageTypes.all

private func fuzzProtoDecode(_ input: UnsafeRawBufferPointer) {
  guard let selector = input.first else { return }
  let type = decodedTypes[Int(selector) % decodedTypes.count]
  let bytes = UnsafeRawBufferPointer(rebasing: input[1...])
  checkRoundTrip(type, bytes)
  // The decode straight from the wire against protobuf-c's unpack, the codec of record.
  if let bridged = type as? any CBridgedMessage.Type {
    let verdict = WireDecodeCheck.check(bridged, bytes)
    invariant(verdict.problem == nil, verdict.problem ?? "")
  }
}

private func checkRoundTrip<M: ProtoMessage>(_: M.Type, _ bytes: UnsafeRawBufferPointer) {
  // Most inputs are not an M: throwing is the expected outcome, crashing is not.
  guard let decoded = try? M(serializedBytes: bytes) else { return }
  let encoded = decoded.serializedBytes()
  let again: M
  let twice: M
  do {
    again = try M(serializedBytes: encoded)
    twice = try M(serializedBytes: encoded)
  } catch {
    fatalError("invariant broken: \(M.protoMessageName)'s own encoding does not decode: \(error)")
  }
  invariant(
    again.serializedBytes() == encoded, "\(M.protoMessageName) encodes differently once decoded")
  if let bridged = decoded as? any CBridgedMessage {
    invariant(
      packedByProtobufC(bridged) == encoded,
      "\(M.protoMessageName): our encoding is not protobuf-c's pack of the same value")
  }
  // Two decodes of the same bytes are unequal only when a NaN double is inside (a value with
  // copy-on-write storage equals itself by identity, so `decoded == decoded` cannot tell);
  // then only the bytes can be compared.
  if again == twice {
    invariant(again == decoded, "\(M.protoMessageName) changed through encode and decode")
  }
}

/// protobuf-c's pack of `message`'s C struct tree: what our direct writer must equal.
private func packedByProtobufC<M: CBridgedMessage>(_ message: M) -> [UInt8] {
  var bytes: [UInt8] = []
  message.encodeThroughC(appendingTo: &bytes)
  return bytes
}

private func protoSeeds() -> [(name: String, bytes: [UInt8])] {
  func seed<M: ProtoMessage>(_ name: String, _: M.Type, _ bytes: [UInt8]) -> (
    name: String, bytes: [UInt8]
  ) {
    (name, [UInt8(decodedTypes.firstIndex { $0 == M.self }!)] + bytes)
  }
  func seed<M: ProtoMessage>(_ name: String, _ message: M) -> (name: String, bytes: [UInt8]) {
    seed(name, M.self, message.serializedBytes())
  }
  let trip = SeedMessages.trip
  var response = FleetEngine.SearchTripsResponse()
  response.trips = [trip, FleetEngine.Trip()]
  response.nextPageToken = "page-2"
  var update = FleetFeed.TripUpdate()
  update.trip = trip
  update.sequence = 7
  update.updateTime = trip.pickupTime
  var rpcStatus = GoogleRPC.Status()
  rpcStatus.code = 8
  rpcStatus.message = "quota"
  rpcStatus.details = SeedMessages.details.map(\.packed)
  let tripBytes = trip.serializedBytes()
  var tripName = [UInt8](trip.name.utf8)
  tripName[3] = 0xFF  // not UTF-8
  return [
    seed("trip", trip),
    seed("trip-empty", FleetEngine.Trip()),
    seed("trip-truncated", FleetEngine.Trip.self, Array(tripBytes.prefix(600))),
    // Field 1000 as a varint (42): kept as an unknown field.
    seed("trip-unknown-field", FleetEngine.Trip.self, tripBytes + [0xC0, 0x3E, 0x2A]),
    seed("trip-name-not-utf8", FleetEngine.Trip.self, [0x0A, UInt8(tripName.count)] + tripName),
    seed("waypoint", trip.remainingWaypoints[0]),
    seed("vehicle-location", trip.lastLocation!),
    seed("traffic", trip.currentRouteSegmentTraffic!),
    seed("attribute-number", trip.attributes[2]),
    seed("get-trip-request", SeedMessages.getTripRequest),
    seed("search-trips-response", response),
    seed("trip-update", update),
    seed("rpc-status", rpcStatus),
    seed("error-info", GoogleRPC.ErrorInfo.self, SeedMessages.details[0].packed.value),
    seed("any", SeedMessages.details[5].packed),
  ]
}
