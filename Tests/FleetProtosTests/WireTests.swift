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
