@testable import FleetProtos
import FleetProtosFixtures
import Testing

/// What one decode builds once and shares (ProtoDecodeSharing): equal copy-on-write messages
/// and equal long strings of one message tree. Sharing must be invisible: equal values, and a
/// change to one copy leaves the others as they were.
@Suite("Decoding builds equal parts of a message once")
struct DecodeSharingTests {
  let bytes = SampleTrips.fullyPopulated.serializedBytes()

  @Test("equal waypoints of one trip share one storage; different ones do not")
  func equalWaypointsShareStorage() throws {
    let trip = try FleetEngine.Trip(serializedBytes: bytes)
    #expect(trip == SampleTrips.fullyPopulated)
    try #require(trip.remainingWaypoints.count == 2 && trip.vehicleWaypoints.count == 2)
    #expect(trip.vehicleWaypoints[0].storage === trip.remainingWaypoints[0].storage)
    #expect(trip.vehicleWaypoints[1].storage === trip.remainingWaypoints[1].storage)
    let endPoint = try #require(trip.currentRouteSegmentEndPoint)
    #expect(endPoint.storage === trip.remainingWaypoints[0].storage)
    #expect(trip.remainingWaypoints[0].storage !== trip.remainingWaypoints[1].storage)
    let pickup = try #require(trip.pickupPoint)
    let dropoff = try #require(trip.dropoffPoint)
    #expect(pickup.storage !== dropoff.storage)
  }

  @Test("equal repeated message fields of one trip share one array; different ones do not")
  func equalRepeatedFieldsShareArrays() throws {
    let trip = try FleetEngine.Trip(serializedBytes: bytes)
    #expect(sameArray(trip.vehicleWaypoints, trip.remainingWaypoints))
    let current = try #require(trip.currentRouteSegmentTraffic?.speedReadingInterval)
    let first = try #require(trip.remainingWaypoints[0].trafficToWaypoint?.speedReadingInterval)
    #expect(current == first)
    #expect(sameArray(current, first))
    #expect(!sameArray(trip.route, trip.remainingWaypoints[0].pathToWaypoint))
    #expect(
      !sameArray(
        trip.remainingWaypoints[0].pathToWaypoint, trip.remainingWaypoints[1].pathToWaypoint))
  }

  @Test("a change to a shared array changes that copy only")
  func changingASharedArrayLeavesTheOthers() throws {
    var trip = try FleetEngine.Trip(serializedBytes: bytes)
    trip.vehicleWaypoints.removeLast()
    trip.currentRouteSegmentTraffic?.speedReadingInterval[0].speed = .trafficJam
    #expect(trip.vehicleWaypoints.count == 1)
    #expect(trip.remainingWaypoints == SampleTrips.fullyPopulated.remainingWaypoints)
    #expect(trip.currentRouteSegmentTraffic?.speedReadingInterval[0].speed == .trafficJam)
    #expect(trip.remainingWaypoints[0].trafficToWaypoint?.speedReadingInterval[0].speed == .normal)
  }

  @Test("a change to a shared waypoint changes that copy only")
  func changingASharedCopyLeavesTheOthers() throws {
    var trip = try FleetEngine.Trip(serializedBytes: bytes)
    trip.vehicleWaypoints[0].tripID = "trip-other"
    trip.vehicleWaypoints[0].location?.accessPointID = "access-2"
    #expect(trip.vehicleWaypoints[0].tripID == "trip-other")
    #expect(trip.remainingWaypoints[0].tripID == "trip-000042")
    #expect(trip.remainingWaypoints[0].location?.accessPointID == "access-1")
    #expect(trip.currentRouteSegmentEndPoint == SampleTrips.fullyPopulated.remainingWaypoints[0])
    #expect(trip.remainingWaypoints == SampleTrips.fullyPopulated.remainingWaypoints)
  }

  @Test("equal strings longer than 15 bytes share one buffer; different ones stay apart")
  func equalLongStringsShareStorage() throws {
    let trip = try FleetEngine.Trip(serializedBytes: bytes)
    let pickup = try #require(trip.pickupPoint?.terminalPointID)
    let dropoff = try #require(trip.dropoffPoint?.terminalPointID)
    #expect(pickup.value == "ChIJ2eUgeAK6j4ARbn5u_wAGqWA")
    #expect(sameBuffer(pickup.value, dropoff.value))
    let path = try #require(trip.remainingWaypoints[0].trafficToWaypoint)
    #expect(!sameBuffer(pickup.value, path.encodedPathToWaypoint))
  }

  @Test("separate decodes share nothing: each owns its values")
  func separateDecodesShareNothing() throws {
    let first = try FleetEngine.Trip(serializedBytes: bytes)
    let second = try FleetEngine.Trip(serializedBytes: bytes)
    #expect(first == second)
    #expect(first.remainingWaypoints[0].storage !== second.remainingWaypoints[0].storage)
    #expect(!sameBuffer(first.name, second.name))
  }

  @Test("a decode that fails part-way leaves nothing to the next one")
  func failedDecodeLeavesNothingShared() throws {
    // A decode that fails part-way must not leave its half-built values for the next one.
    var corrupt = bytes
    corrupt.removeLast(3)
    #expect(throws: ProtoDecodingError.self) { try FleetEngine.Trip(serializedBytes: corrupt) }
    let trip = try FleetEngine.Trip(serializedBytes: bytes)
    #expect(trip == SampleTrips.fullyPopulated)
  }

  private func sameArray<T>(_ a: [T], _ b: [T]) -> Bool {
    a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
  }

  private func sameBuffer(_ a: String, _ b: String) -> Bool {
    var (a, b) = (a, b)
    return a.withUTF8 { x in b.withUTF8 { y in x.baseAddress == y.baseAddress } }
  }
}
