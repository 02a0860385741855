import FleetProtos
import Foundation
import GRPCTestingProtos
import PeerSupport
import Testing

/// Our message layer against Google's own message classes, both ways: Google's Python classes
/// (`Tests/Python/codec_peer.py`) serialise fully populated messages, Swift decodes them and
/// every field's value is checked here; then Swift re-encodes them and Google's classes must
/// read back exactly what they wrote, unknown fields and enum numbers included.
///
/// The expected values are spelled out twice on purpose, in codec_peer.py and below: a value
/// that only one side states cannot prove the other side right.
@Suite("Wire compatibility with Google's message classes")
struct WireTests {
  /// The messages of one `codec_peer.py make` run, by name, shared by every test of the suite.
  static let made = Task { try await CodecPeer.make() }

  /// Google's bytes for `name`.
  func bytes(_ name: String) async throws -> [UInt8] {
    try #require(try await Self.made.value[name], "codec_peer.py make printed no \"\(name)\"")
  }

  @Test("Trip: every field, nested messages included, decodes from Google's bytes")
  func trip() async throws {
    let trip = try FleetEngine.Trip(serializedBytes: try await bytes("trip"))
    try expectFullTrip(trip)
    #expect(trip.unknownFields.isEmpty)
  }

  @Test("an enum number our schema does not know decodes as .unrecognized and is sent again")
  func unknownEnumValue() async throws {
    let trip = try FleetEngine.Trip(serializedBytes: try await bytes("trip"))
    #expect(trip.view == .unrecognized(99))
    #expect(trip.view.rawValue == 99)
    let again = try FleetEngine.Trip(serializedBytes: trip.serializedBytes())
    #expect(again.view == .unrecognized(99))
  }

  @Test("GetTripRequest decodes from Google's bytes")
  func getTripRequest() async throws {
    let request = try FleetEngine.GetTripRequest(
      serializedBytes: try await bytes("get_trip_request"))
    try expectHeader(request.header)
    #expect(request.name == "providers/fleet-consumer-test/trips/trip-0042")
    #expect(request.view == .journeySharingV1s)
    #expect(request.currentRouteSegmentVersion == timestamp(1_767_226_400, 10))
    #expect(request.remainingWaypointsVersion == timestamp(1_767_226_401, 20))
    #expect(request.routeFormatType == .encodedPolylineType)
    #expect(request.currentRouteSegmentTrafficVersion == timestamp(1_767_226_402, 30))
    #expect(request.remainingWaypointsRouteVersion == timestamp(1_767_226_403, 40))
    #expect(request.unknownFields.isEmpty)
  }

  @Test("CreateTripRequest with a full Trip decodes from Google's bytes")
  func createTripRequest() async throws {
    let request = try FleetEngine.CreateTripRequest(
      serializedBytes: try await bytes("create_trip_request"))
    try expectHeader(request.header)
    #expect(request.parent == "providers/fleet-consumer-test")
    #expect(request.tripID == "trip-0042")
    try expectFullTrip(request.trip)
    #expect(request.unknownFields.isEmpty)
  }

  @Test("UpdateTripRequest with a field mask decodes from Google's bytes")
  func updateTripRequest() async throws {
    let request = try FleetEngine.UpdateTripRequest(
      serializedBytes: try await bytes("update_trip_request"))
    try expectHeader(request.header)
    #expect(request.name == "providers/fleet-consumer-test/trips/trip-0042")
    try expectFullTrip(request.trip)
    #expect(
      request.updateMask?.paths == [
        "trip_status", "intermediate_destination_index", "intermediate_destinations_version",
        "vehicle_id",
      ])
    #expect(request.unknownFields.isEmpty)
  }

  @Test("SearchTripsRequest decodes from Google's bytes")
  func searchTripsRequest() async throws {
    let request = try FleetEngine.SearchTripsRequest(
      serializedBytes: try await bytes("search_trips_request"))
    try expectHeader(request.header)
    #expect(request.parent == "providers/fleet-consumer-test")
    #expect(request.vehicleID == "vehicle-0007")
    #expect(request.activeTripsOnly == true)
    #expect(request.pageSize == 25)
    #expect(request.pageToken == "page-token-2")
    #expect(request.minimumStaleness == duration(30, 500_000_000))
    #expect(request.unknownFields.isEmpty)
  }

  @Test("google.rpc.Status decodes, and its three Any details unpack to what Google packed")
  func status() async throws {
    let status = try GoogleRPC.Status(serializedBytes: try await bytes("status"))
    #expect(status.code == 9)
    #expect(status.message == "Trip ‘trip-0042’ cannot move from COMPLETE to ARRIVED_AT_PICKUP")
    #expect(status.unknownFields.isEmpty)
    try #require(status.details.count == 3)
    #expect(status.details[0].typeURL == "type.googleapis.com/google.rpc.ErrorInfo")
    #expect(status.details[1].typeURL == "type.googleapis.com/google.rpc.RetryInfo")
    #expect(status.details[2].typeURL == "type.googleapis.com/google.rpc.BadRequest")
    // An Any holding one type does not unpack as another.
    #expect(try status.details[0].unpack(as: GoogleRPC.RetryInfo.self) == nil)

    let info = try #require(try status.details[0].unpack(as: GoogleRPC.ErrorInfo.self))
    #expect(info.reason == "TRIP_STATE_CONFLICT")
    #expect(info.domain == "fleetengine.googleapis.com")
    #expect(
      info.metadata == [
        "trip_id": "trip-0042", "current_status": "COMPLETE",
        "requested_status": "ARRIVED_AT_PICKUP",
      ])

    let retry = try #require(try status.details[1].unpack(as: GoogleRPC.RetryInfo.self))
    #expect(retry.retryDelay == duration(2, 750_000_000))

    let badRequest = try #require(try status.details[2].unpack(as: GoogleRPC.BadRequest.self))
    let violations = badRequest.fieldViolations
    try #require(violations.count == 3)
    #expect(violations[0].field == "trip.trip_status")
    #expect(violations[0].description == "COMPLETE is final")
    #expect(violations[0].reason == "FINAL_STATE")
    #expect(violations[0].localizedMessage?.locale == "en-US")
    #expect(violations[0].localizedMessage?.message == "The trip has already ended.")
    #expect(violations[1].field == "update_mask.paths[1]")
    #expect(violations[1].description == "unknown field path")
    #expect(violations[1].reason == "UNKNOWN_PATH")
    #expect(violations[1].localizedMessage?.locale == "de-DE")
    #expect(violations[1].localizedMessage?.message == "Unbekannter Feldpfad „foo“.")
    #expect(violations[2].field == "trip.number_of_passengers")
    #expect(violations[2].description == "must be at least 1")
    #expect(violations[2].reason == "OUT_OF_RANGE")
    #expect(violations[2].localizedMessage?.locale == "fr-FR")
    #expect(
      violations[2].localizedMessage?.message == "Au moins un passager, s’il vous plaît.")
  }

  @Test("grpc.testing.SimpleRequest decodes from Google's bytes")
  func simpleRequest() async throws {
    let request = try GRPCTesting.SimpleRequest(serializedBytes: try await bytes("simple_request"))
    // COMPRESSABLE is PayloadType's only value, so it is also the default.
    #expect(request.responseType == .compressable)
    #expect(request.responseSize == 314_159)
    #expect(request.payload?.type == .compressable)
    #expect(request.payload?.body == (0...255).map { UInt8($0) })
    #expect(request.fillUsername == true)
    #expect(request.fillOauthScope == true)
    #expect(request.responseCompressed?.value == true)
    #expect(request.responseStatus?.code == 13)
    #expect(request.responseStatus?.message == "echo this status")
    // Present, holding `false`: presence must survive although the only field is the default.
    #expect(request.expectCompressed?.value == false)
    #expect(request.fillServerID == true)
    #expect(request.fillGrpclbRouteType == true)
    #expect(request.orcaPerQueryReport?.cpuUtilization == 0.625)
    #expect(request.orcaPerQueryReport?.memoryUtilization == 0.375)
    #expect(request.orcaPerQueryReport?.requestCost == ["db_queries": 12.0, "cache_misses": 3.5])
    #expect(request.orcaPerQueryReport?.utilization == ["gpu": 0.25, "disk": 0.875])
    #expect(request.orcaOobReport?.cpuUtilization == 0.125)
    #expect(request.orcaOobReport?.memoryUtilization == 0.5)
    #expect(request.orcaOobReport?.requestCost == ["queue_depth": 7.0])
    #expect(request.orcaOobReport?.utilization == ["network": 0.0625, "threads": 0.75])
    #expect(request.unknownFields.isEmpty)
  }

  @Test("grpc.testing.SimpleResponse decodes from Google's bytes")
  func simpleResponse() async throws {
    let response = try GRPCTesting.SimpleResponse(
      serializedBytes: try await bytes("simple_response"))
    #expect(response.payload?.type == .compressable)
    #expect(response.payload?.body == [0x00, 0x01] + Array("response body".utf8) + [0xFF])
    #expect(response.username == "test-user@example.com")
    #expect(response.oauthScope == "https://www.googleapis.com/auth/xapi.zoo")
    #expect(response.serverID == "server-3")
    #expect(response.grpclbRouteType == .backend)
    #expect(response.hostname == "interop-host-1")
    #expect(response.unknownFields.isEmpty)
  }

  @Test("grpc.testing.StreamingOutputCallRequest decodes from Google's bytes")
  func streamingOutputCallRequest() async throws {
    let request = try GRPCTesting.StreamingOutputCallRequest(
      serializedBytes: try await bytes("streaming_output_call_request"))
    #expect(request.responseType == .compressable)
    let parameters = request.responseParameters
    try #require(parameters.count == 3)
    #expect(parameters[0].size == 31415)
    #expect(parameters[0].intervalUs == 1000)
    #expect(parameters[0].compressed?.value == true)
    #expect(parameters[1].size == 9)
    #expect(parameters[1].intervalUs == 2000)
    #expect(parameters[1].compressed?.value == false)
    #expect(parameters[2].size == 2653)
    #expect(parameters[2].intervalUs == 3000)
    #expect(parameters[2].compressed?.value == true)
    #expect(request.payload?.type == .compressable)
    #expect(request.payload?.body == [0, 0, 0] + Array("stream".utf8))
    #expect(request.responseStatus?.code == 2)
    #expect(request.responseStatus?.message == "streaming status")
    #expect(request.orcaOobReport?.cpuUtilization == 0.875)
    #expect(request.orcaOobReport?.memoryUtilization == 0.5)
    #expect(request.orcaOobReport?.requestCost == ["rpcs": 3.0])
    #expect(request.orcaOobReport?.utilization == ["memory_pressure": 0.25])
    #expect(request.unknownFields.isEmpty)
  }

  @Test("a field our schema does not know is kept byte for byte and sent again unchanged")
  func unknownField() async throws {
    let original = try await bytes("trip_with_unknown_field")
    let trip = try FleetEngine.Trip(serializedBytes: original)
    #expect(trip.name == "providers/fleet-consumer-test/trips/trip-0043")
    #expect(trip.tripStatus == .new)
    let data = Array("a field from a newer Fleet Engine".utf8)
    // Wire type 2: the kept bytes are the length prefix and the data.
    let expected = ProtoUnknownFields.Field(
      number: 999, wireType: 2, bytes: [UInt8(data.count)] + data)
    #expect(trip.unknownFields.fields == [expected])

    let reencoded = trip.serializedBytes()
    // Both encoders write known fields in field-number order and unknown ones last.
    #expect(reencoded == original)
    #expect(try FleetEngine.Trip(serializedBytes: reencoded).unknownFields.fields == [expected])
  }

  @Test("Google's classes read back, unchanged, every message Swift re-encodes")
  func googleReadsSwiftEncodings() async throws {
    let made = try await Self.made.value
    #expect(
      Set(made.keys) == Set(Self.reencoders.keys),
      "codec_peer.py and this suite must know the same messages")
    var reencoded: [String: [UInt8]] = [:]
    for (name, google) in made {
      let reencode = try #require(Self.reencoders[name], "no Swift type for \"\(name)\"")
      reencoded[name] = try reencode(google)
    }

    let output = try await PythonPeer.run(
      "codec_peer.py", ["check"], stdin: try CodecPeer.encode(reencoded))
    let verdicts = try? JSONDecoder().decode([String: String].self, from: Data(output.stdout))
    if output.status != 0 { output.attach(as: "codec_peer-check") }
    #expect(output.status == 0, "codec_peer.py check:\n\(output.transcript)")
    let checked = try #require(verdicts, "codec_peer.py check printed no verdicts")
    for name in made.keys.sorted() {
      #expect(checked[name] == "ok", "\(name): \(checked[name] ?? "no verdict")")
    }
  }

  /// Decodes Google's bytes of each message as its Swift type and encodes it again.
  static let reencoders: [String: @Sendable ([UInt8]) throws -> [UInt8]] = [
    "trip": reencode(FleetEngine.Trip.self),
    "get_trip_request": reencode(FleetEngine.GetTripRequest.self),
    "create_trip_request": reencode(FleetEngine.CreateTripRequest.self),
    "update_trip_request": reencode(FleetEngine.UpdateTripRequest.self),
    "search_trips_request": reencode(FleetEngine.SearchTripsRequest.self),
    "status": reencode(GoogleRPC.Status.self),
    "simple_request": reencode(GRPCTesting.SimpleRequest.self),
    "simple_response": reencode(GRPCTesting.SimpleResponse.self),
    "streaming_output_call_request": reencode(GRPCTesting.StreamingOutputCallRequest.self),
    "trip_with_unknown_field": reencode(FleetEngine.Trip.self),
  ]

  static func reencode<M: ProtoMessage>(_: M.Type) -> @Sendable ([UInt8]) throws -> [UInt8] {
    { bytes in try M(serializedBytes: bytes).serializedBytes() }
  }
}

// MARK: - codec_peer.py

/// The JSON both commands of codec_peer.py speak: `{name: base64 of the message}`.
private enum CodecPeer {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  static func make() async throws -> [String: [UInt8]] {
    let output = try await PythonPeer.run("codec_peer.py", ["make"])
    guard output.status == 0 else {
      throw Failure(description: "codec_peer.py make failed:\n\(output.transcript)")
    }
    let encoded = try JSONDecoder().decode([String: String].self, from: Data(output.stdout))
    return try encoded.mapValues { text in
      guard let data = Data(base64Encoded: text) else {
        throw Failure(description: "codec_peer.py make printed bad base64: \(text)")
      }
      return [UInt8](data)
    }
  }

  static func encode(_ messages: [String: [UInt8]]) throws -> [UInt8] {
    [UInt8](try JSONEncoder().encode(messages.mapValues { Data($0).base64EncodedString() }))
  }
}

// MARK: - Expected values, as codec_peer.py sets them

private func latLng(_ latitude: Double, _ longitude: Double) -> GoogleType.LatLng {
  var value = GoogleType.LatLng()
  value.latitude = latitude
  value.longitude = longitude
  return value
}

private func timestamp(_ seconds: Int64, _ nanos: Int32) -> GoogleProtobuf.Timestamp {
  var value = GoogleProtobuf.Timestamp()
  value.seconds = seconds
  value.nanos = nanos
  return value
}

private func duration(_ seconds: Int64, _ nanos: Int32) -> GoogleProtobuf.Duration {
  var value = GoogleProtobuf.Duration()
  value.seconds = seconds
  value.nanos = nanos
  return value
}

private func interval(
  _ start: Int32, _ end: Int32, _ speed: FleetEngine.SpeedReadingInterval.Speed
) -> FleetEngine.SpeedReadingInterval {
  var value = FleetEngine.SpeedReadingInterval()
  value.startPolylinePointIndex = start
  value.endPolylinePointIndex = end
  value.speed = speed
  return value
}

/// codec_peer.py's HEADER.
private func expectHeader(
  _ header: FleetEngine.RequestHeader?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let header = try #require(header, sourceLocation: sourceLocation)
  #expect(header.languageCode == "de-CH", sourceLocation: sourceLocation)
  #expect(header.regionCode == "CH", sourceLocation: sourceLocation)
  #expect(header.sdkVersion == "5.2.1", sourceLocation: sourceLocation)
  #expect(header.osVersion == "14.1", sourceLocation: sourceLocation)
  #expect(header.deviceModel == "Pixel 8 Pro", sourceLocation: sourceLocation)
  #expect(header.sdkType == .driver, sourceLocation: sourceLocation)
  #expect(header.mapsSdkVersion == "18.2.0", sourceLocation: sourceLocation)
  #expect(header.navSdkVersion == "5.3.0", sourceLocation: sourceLocation)
  #expect(header.platform == .android, sourceLocation: sourceLocation)
  #expect(header.manufacturer == "Google", sourceLocation: sourceLocation)
  #expect(header.androidApiLevel == 34, sourceLocation: sourceLocation)
  #expect(header.traceID == "trace-7f3a9c", sourceLocation: sourceLocation)
}

/// codec_peer.py's full_trip().
private func expectFullTrip(_ trip: FleetEngine.Trip?) throws {
  let trip = try #require(trip)
  #expect(trip.name == "providers/fleet-consumer-test/trips/trip-0042")
  #expect(trip.vehicleID == "vehicle-0007")
  #expect(trip.tripStatus == .enrouteToIntermediateDestination)
  #expect(trip.tripType == .exclusive)
  try expectPickup(trip.pickupPoint)
  try expectStop(
    trip.actualPickupPoint, point: latLng(37.77495, -122.41935),
    timestamp: timestamp(1_767_225_900, 250_000_000), stopTime: timestamp(1_767_225_901, 1))
  try expectStop(
    trip.actualPickupArrivalPoint, point: latLng(37.77492, -122.41938),
    timestamp: timestamp(1_767_225_840, 500_000_000),
    stopTime: timestamp(1_767_225_841, 999_999_999))
  #expect(trip.pickupTime == timestamp(1_767_225_900, 123_456_789))
  try #require(trip.intermediateDestinations.count == 2)
  try expectStop1(trip.intermediateDestinations[0])
  try expectStop2(trip.intermediateDestinations[1])
  #expect(trip.intermediateDestinationsVersion == timestamp(1_767_225_000, 42))
  #expect(trip.intermediateDestinationIndex == 1)
  let arrivals = trip.actualIntermediateDestinationArrivalPoints
  try #require(arrivals.count == 2)
  try expectStop(
    arrivals[0], point: latLng(37.78491, -122.40941), timestamp: timestamp(1_767_226_200, 100),
    stopTime: timestamp(1_767_226_201, 200))
  try expectStop(
    arrivals[1], point: latLng(37.79491, -122.39941), timestamp: timestamp(1_767_226_800, 300),
    stopTime: timestamp(1_767_226_801, 400))
  let pickups = trip.actualIntermediateDestinations
  try #require(pickups.count == 2)
  try expectStop(
    pickups[0], point: latLng(37.78492, -122.40942), timestamp: timestamp(1_767_226_260, 500),
    stopTime: timestamp(1_767_226_261, 600))
  try expectStop(
    pickups[1], point: latLng(37.79492, -122.39942), timestamp: timestamp(1_767_226_860, 700),
    stopTime: timestamp(1_767_226_861, 800))
  try expectDropoff(trip.dropoffPoint)
  try expectStop(
    trip.actualDropoffPoint, point: latLng(37.80491, -122.27111),
    timestamp: timestamp(1_767_228_000, 900_000_000),
    stopTime: timestamp(1_767_228_001, 900_000_001))
  #expect(trip.dropoffTime == timestamp(1_767_228_000, 987_654_321))
  try #require(trip.remainingWaypoints.count == 2)
  try expectToStop2(trip.remainingWaypoints[0])
  try expectToDropoff(trip.remainingWaypoints[1])
  try #require(trip.vehicleWaypoints.count == 3)
  try expectToOtherPickup(trip.vehicleWaypoints[0])
  try expectToStop2(trip.vehicleWaypoints[1])
  try expectToDropoff(trip.vehicleWaypoints[2])
  #expect(
    trip.route == [
      latLng(37.7793, -122.4155), latLng(37.7871, -122.4052), latLng(37.7949, -122.3994),
    ])
  #expect(trip.currentRouteSegment == "_p~iF~ps|U_ulLnnqC_mqNvxq`@")
  #expect(trip.currentRouteSegmentVersion == timestamp(1_767_226_400, 1))
  #expect(
    trip.currentRouteSegmentTraffic?.speedReadingInterval == [
      interval(1, 4, .normal), interval(4, 9, .slow), interval(9, 15, .trafficJam),
    ])
  #expect(
    trip.currentRouteSegmentTraffic?.encodedPathToWaypoint == "_p~iF~ps|U_ulLnnqC_mqNvxq`@")
  #expect(trip.currentRouteSegmentTrafficVersion == timestamp(1_767_226_400, 2))
  try expectToStop2(trip.currentRouteSegmentEndPoint)
  #expect(trip.remainingDistanceMeters == 2380)
  #expect(trip.etaToFirstWaypoint == timestamp(1_767_226_980, 750_000_000))
  #expect(trip.remainingTimeToFirstWaypoint == duration(480, 750_000_000))
  #expect(trip.remainingWaypointsVersion == timestamp(1_767_226_400, 3))
  #expect(trip.remainingWaypointsRouteVersion == timestamp(1_767_226_400, 4))
  #expect(trip.numberOfPassengers == 3)
  try expectLastLocation(trip.lastLocation)
  #expect(trip.lastLocationSnappable == true)
  // A TripView number neither schema defines; see unknownEnumValue().
  #expect(trip.view == .unrecognized(99))
  try #require(trip.attributes.count == 3)
  #expect(trip.attributes[0].key == "fare_class")
  #expect(trip.attributes[0].tripAttributeValue == .stringValue("Zürich Flughafen ✈"))
  #expect(trip.attributes[1].key == "wheelchair_accessible")
  #expect(trip.attributes[1].tripAttributeValue == .boolValue(true))
  #expect(trip.attributes[2].key == "surge_multiplier")
  #expect(trip.attributes[2].tripAttributeValue == .numberValue(1.75))
}

/// codec_peer.py's LAST_LOCATION.
private func expectLastLocation(_ location: FleetEngine.VehicleLocation?) throws {
  let location = try #require(location)
  #expect(location.location == latLng(37.7793, -122.4155))
  #expect(location.horizontalAccuracy == 4.5)
  #expect(location.latlngAccuracy == 3.25)
  #expect(location.heading == 271)
  #expect(location.bearingAccuracy == 12.5)
  #expect(location.headingAccuracy == 7.75)
  #expect(location.altitude == 52.125)
  #expect(location.verticalAccuracy == 2.5)
  #expect(location.altitudeAccuracy == 1.875)
  #expect(location.speedKmph == 43)
  #expect(location.speed == 11.875)
  #expect(location.speedAccuracy == 0.625)
  #expect(location.updateTime == timestamp(1_767_226_500, 111_111_111))
  #expect(location.serverTime == timestamp(1_767_226_501, 222_222_222))
  #expect(location.locationSensor == .fusedLocationProvider)
  #expect(location.isRoadSnapped == true)
  // Present, holding `false`: not the same as absent (nil).
  #expect(location.isGpsSensorEnabled == false)
  #expect(location.timeSinceUpdate == 5)
  #expect(location.numStaleUpdates == 2)
  #expect(location.rawLocation == latLng(37.77931, -122.41551))
  #expect(location.rawLocationTime == timestamp(1_767_226_499, 333_333_333))
  #expect(location.rawLocationSensor == .gps)
  #expect(location.rawLocationAccuracy == 6.5)
  #expect(location.flpLocation == latLng(37.77932, -122.41552))
  #expect(location.flpUpdateTime == timestamp(1_767_226_498, 444_444_444))
  #expect(location.flpLatlngAccuracyMeters == 3.5)
  #expect(location.flpHeadingDegrees == 268)
  #expect(location.supplementalLocation == latLng(37.77933, -122.41553))
  #expect(location.supplementalLocationTime == timestamp(1_767_226_497, 555_555_555))
  #expect(location.supplementalLocationSensor == .customerSuppliedLocation)
  #expect(location.supplementalLocationAccuracy == 9.25)
  #expect(location.roadSnapped == true)
}

private func expectStop(
  _ stop: FleetEngine.StopLocation?, point: GoogleType.LatLng,
  timestamp: GoogleProtobuf.Timestamp, stopTime: GoogleProtobuf.Timestamp,
  sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let stop = try #require(stop, sourceLocation: sourceLocation)
  #expect(stop.point == point, sourceLocation: sourceLocation)
  #expect(stop.timestamp == timestamp, sourceLocation: sourceLocation)
  #expect(stop.stopTime == stopTime, sourceLocation: sourceLocation)
}

private func expectTerminal(
  _ location: FleetEngine.TerminalLocation?, point: GoogleType.LatLng,
  terminalPointID: FleetEngine.TerminalPointId.ID, terminalPointValue: String,
  accessPointID: String, tripID: String, type: FleetEngine.WaypointType,
  sourceLocation: SourceLocation
) throws {
  let location = try #require(location, sourceLocation: sourceLocation)
  #expect(location.point == point, sourceLocation: sourceLocation)
  #expect(location.terminalPointID?.id == terminalPointID, sourceLocation: sourceLocation)
  #expect(location.terminalPointID?.value == terminalPointValue, sourceLocation: sourceLocation)
  #expect(location.accessPointID == accessPointID, sourceLocation: sourceLocation)
  #expect(location.tripID == tripID, sourceLocation: sourceLocation)
  #expect(location.terminalLocationType == type, sourceLocation: sourceLocation)
}

/// codec_peer.py's PICKUP.
private func expectPickup(
  _ location: FleetEngine.TerminalLocation?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  try expectTerminal(
    location, point: latLng(37.7749, -122.4194),
    terminalPointID: .placeID("ChIJIQBpAG2ahYAR_6128GcTUEo"), terminalPointValue: "terminal-pickup",
    accessPointID: "access-point-pickup", tripID: "trip-0042", type: .pickupWaypointType,
    sourceLocation: sourceLocation)
}

/// codec_peer.py's STOP_1.
private func expectStop1(
  _ location: FleetEngine.TerminalLocation?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  try expectTerminal(
    location, point: latLng(37.7849, -122.4094), terminalPointID: .generatedID("generated-stop-1"),
    terminalPointValue: "terminal-stop-1", accessPointID: "access-point-stop-1",
    tripID: "trip-0042", type: .intermediateDestinationWaypointType,
    sourceLocation: sourceLocation)
}

/// codec_peer.py's STOP_2.
private func expectStop2(
  _ location: FleetEngine.TerminalLocation?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  try expectTerminal(
    location, point: latLng(37.7949, -122.3994), terminalPointID: .placeID("place-stop-2"),
    terminalPointValue: "terminal-stop-2", accessPointID: "access-point-stop-2",
    tripID: "trip-0042", type: .intermediateDestinationWaypointType,
    sourceLocation: sourceLocation)
}

/// codec_peer.py's DROPOFF.
private func expectDropoff(
  _ location: FleetEngine.TerminalLocation?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  try expectTerminal(
    location, point: latLng(37.8049, -122.2711), terminalPointID: .generatedID("generated-dropoff"),
    terminalPointValue: "terminal-dropoff", accessPointID: "access-point-dropoff",
    tripID: "trip-0042", type: .dropOffWaypointType, sourceLocation: sourceLocation)
}

/// codec_peer.py's TO_OTHER_PICKUP: another trip's pickup on the same vehicle.
private func expectToOtherPickup(
  _ waypoint: FleetEngine.TripWaypoint?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let waypoint = try #require(waypoint, sourceLocation: sourceLocation)
  try expectTerminal(
    waypoint.location, point: latLng(37.7699, -122.4469),
    terminalPointID: .placeID("place-other-pickup"), terminalPointValue: "terminal-other-pickup",
    accessPointID: "access-point-other-pickup", tripID: "trip-0099", type: .pickupWaypointType,
    sourceLocation: sourceLocation)
  #expect(waypoint.tripID == "trip-0099", sourceLocation: sourceLocation)
  #expect(waypoint.waypointType == .pickupWaypointType, sourceLocation: sourceLocation)
  #expect(
    waypoint.pathToWaypoint == [latLng(37.7793, -122.4155), latLng(37.7751, -122.4301)],
    sourceLocation: sourceLocation)
  #expect(waypoint.encodedPathToWaypoint == "o`qeFbcsjVpY~{A", sourceLocation: sourceLocation)
  #expect(
    waypoint.trafficToWaypoint?.speedReadingInterval == [
      interval(1, 2, .slow), interval(2, 3, .normal),
    ], sourceLocation: sourceLocation)
  #expect(
    waypoint.trafficToWaypoint?.encodedPathToWaypoint == "o`qeFbcsjVpY~{A",
    sourceLocation: sourceLocation)
  #expect(waypoint.distanceMeters == 1850, sourceLocation: sourceLocation)
  #expect(waypoint.eta == timestamp(1_767_226_620, 5), sourceLocation: sourceLocation)
  #expect(waypoint.duration == duration(240, 5), sourceLocation: sourceLocation)
}

/// codec_peer.py's TO_STOP_2.
private func expectToStop2(
  _ waypoint: FleetEngine.TripWaypoint?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let waypoint = try #require(waypoint, sourceLocation: sourceLocation)
  try expectStop2(waypoint.location, sourceLocation: sourceLocation)
  #expect(waypoint.tripID == "trip-0042", sourceLocation: sourceLocation)
  #expect(
    waypoint.waypointType == .intermediateDestinationWaypointType, sourceLocation: sourceLocation)
  #expect(
    waypoint.pathToWaypoint == [
      latLng(37.7793, -122.4155), latLng(37.7871, -122.4052), latLng(37.7949, -122.3994),
    ], sourceLocation: sourceLocation)
  #expect(waypoint.encodedPathToWaypoint == "_p~iF~ps|U_ulLnnqC", sourceLocation: sourceLocation)
  #expect(
    waypoint.trafficToWaypoint?.speedReadingInterval == [
      interval(1, 2, .normal), interval(2, 3, .trafficJam),
    ], sourceLocation: sourceLocation)
  #expect(
    waypoint.trafficToWaypoint?.encodedPathToWaypoint == "_p~iF~ps|U_ulLnnqC",
    sourceLocation: sourceLocation)
  #expect(waypoint.distanceMeters == 2380, sourceLocation: sourceLocation)
  #expect(waypoint.eta == timestamp(1_767_226_980, 750_000_000), sourceLocation: sourceLocation)
  #expect(waypoint.duration == duration(480, 750_000_000), sourceLocation: sourceLocation)
}

/// codec_peer.py's TO_DROPOFF.
private func expectToDropoff(
  _ waypoint: FleetEngine.TripWaypoint?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let waypoint = try #require(waypoint, sourceLocation: sourceLocation)
  try expectDropoff(waypoint.location, sourceLocation: sourceLocation)
  #expect(waypoint.tripID == "trip-0042", sourceLocation: sourceLocation)
  #expect(waypoint.waypointType == .dropOffWaypointType, sourceLocation: sourceLocation)
  #expect(
    waypoint.pathToWaypoint == [
      latLng(37.7949, -122.3994), latLng(37.8012, -122.3351), latLng(37.8049, -122.2711),
    ], sourceLocation: sourceLocation)
  #expect(waypoint.encodedPathToWaypoint == "_mqNvxq`@", sourceLocation: sourceLocation)
  #expect(
    waypoint.trafficToWaypoint?.speedReadingInterval == [
      interval(1, 2, .slow), interval(2, 3, .normal),
    ], sourceLocation: sourceLocation)
  #expect(
    waypoint.trafficToWaypoint?.encodedPathToWaypoint == "_mqNvxq`@",
    sourceLocation: sourceLocation)
  #expect(waypoint.distanceMeters == 12750, sourceLocation: sourceLocation)
  #expect(waypoint.eta == timestamp(1_767_228_000, 987_654_321), sourceLocation: sourceLocation)
  #expect(waypoint.duration == duration(1020, 987_654_321), sourceLocation: sourceLocation)
}
