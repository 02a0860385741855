import FleetProtos
import Foundation
import GRPCTestingProtos
import Testing

// The values codec_peer.py puts into the messages it makes, spelled out again here (see
// ``WireTests``), and the checks that a decoded message holds them.

// MARK: - Expected values, as codec_peer.py sets them

func latLng(_ latitude: Double, _ longitude: Double) -> GoogleType.LatLng {
  var value = GoogleType.LatLng()
  value.latitude = latitude
  value.longitude = longitude
  return value
}

func timestamp(_ seconds: Int64, _ nanos: Int32) -> GoogleProtobuf.Timestamp {
  var value = GoogleProtobuf.Timestamp()
  value.seconds = seconds
  value.nanos = nanos
  return value
}

func duration(_ seconds: Int64, _ nanos: Int32) -> GoogleProtobuf.Duration {
  var value = GoogleProtobuf.Duration()
  value.seconds = seconds
  value.nanos = nanos
  return value
}

func interval(
  _ start: Int32, _ end: Int32, _ speed: FleetEngine.SpeedReadingInterval.Speed
) -> FleetEngine.SpeedReadingInterval {
  var value = FleetEngine.SpeedReadingInterval()
  value.startPolylinePointIndex = start
  value.endPolylinePointIndex = end
  value.speed = speed
  return value
}

/// codec_peer.py's HEADER.
func expectHeader(
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
func expectFullTrip(_ trip: FleetEngine.Trip?) throws {
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
func expectLastLocation(_ location: FleetEngine.VehicleLocation?) throws {
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

func expectStop(
  _ stop: FleetEngine.StopLocation?, point: GoogleType.LatLng,
  timestamp: GoogleProtobuf.Timestamp, stopTime: GoogleProtobuf.Timestamp,
  sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let stop = try #require(stop, sourceLocation: sourceLocation)
  #expect(stop.point == point, sourceLocation: sourceLocation)
  #expect(stop.timestamp == timestamp, sourceLocation: sourceLocation)
  #expect(stop.stopTime == stopTime, sourceLocation: sourceLocation)
}

func expectTerminal(
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
func expectPickup(
  _ location: FleetEngine.TerminalLocation?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  try expectTerminal(
    location, point: latLng(37.7749, -122.4194),
    terminalPointID: .placeID("ChIJIQBpAG2ahYAR_6128GcTUEo"), terminalPointValue: "terminal-pickup",
    accessPointID: "access-point-pickup", tripID: "trip-0042", type: .pickupWaypointType,
    sourceLocation: sourceLocation)
}

/// codec_peer.py's STOP_1.
func expectStop1(
  _ location: FleetEngine.TerminalLocation?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  try expectTerminal(
    location, point: latLng(37.7849, -122.4094), terminalPointID: .generatedID("generated-stop-1"),
    terminalPointValue: "terminal-stop-1", accessPointID: "access-point-stop-1",
    tripID: "trip-0042", type: .intermediateDestinationWaypointType,
    sourceLocation: sourceLocation)
}

/// codec_peer.py's STOP_2.
func expectStop2(
  _ location: FleetEngine.TerminalLocation?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  try expectTerminal(
    location, point: latLng(37.7949, -122.3994), terminalPointID: .placeID("place-stop-2"),
    terminalPointValue: "terminal-stop-2", accessPointID: "access-point-stop-2",
    tripID: "trip-0042", type: .intermediateDestinationWaypointType,
    sourceLocation: sourceLocation)
}

/// codec_peer.py's DROPOFF.
func expectDropoff(
  _ location: FleetEngine.TerminalLocation?, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  try expectTerminal(
    location, point: latLng(37.8049, -122.2711), terminalPointID: .generatedID("generated-dropoff"),
    terminalPointValue: "terminal-dropoff", accessPointID: "access-point-dropoff",
    tripID: "trip-0042", type: .dropOffWaypointType, sourceLocation: sourceLocation)
}

/// codec_peer.py's TO_OTHER_PICKUP: another trip's pickup on the same vehicle.
func expectToOtherPickup(
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
func expectToStop2(
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
func expectToDropoff(
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
