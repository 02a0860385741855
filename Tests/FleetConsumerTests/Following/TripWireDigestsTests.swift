import FleetProtosFixtures
import Testing

@testable import FleetConsumer

/// A poll's answer is unpacked without the fields whose bytes are those of the last answer
/// merged (``TripWireDigests``); these hold the follower that does so to one that unpacks
/// every answer whole, over the generated answers of ``TripMergeEquivalenceTests``.
@Suite("Leaving out the fields an answer repeats changes nothing")
struct TripWireDigestsTests {
  private typealias Generator = TripMergeEquivalenceTests.Generator

  /// A follower with its first poll in flight.
  private static func polling() -> TripFollower {
    var follower = TripFollower(
      pollInterval: .seconds(1),
      retryPolicy: RetryPolicy(initialBackoff: .seconds(1), maximumBackoff: .seconds(60)))
    _ = follower.start()
    _ = follower.pollDue(generation: 1)
    return follower
  }

  private static func digested(
    _ follower: inout TripFollower, _ bytes: [UInt8], ownTripID: String
  ) throws -> TripFollower.OnResponse {
    try bytes.withUnsafeBytes { raw in
      try follower.received(bytes: raw, generation: 1, ownTripID: ownTripID)
    }
  }

  private static func whole(
    _ follower: inout TripFollower, _ bytes: [UInt8], ownTripID: String
  ) throws -> TripFollower.OnResponse {
    try bytes.withUnsafeBytes { raw in
      try follower.received(bytes: raw, generation: 1, ownTripID: ownTripID, digesting: false)
    }
  }

  @Test(
    "generated answers, merged with repeated fields left out and whole, give the same trips and events",
    arguments: 0..<9)
  func sequences(seed: UInt64) throws {
    // Other trips' stops hidden from none, from some (the slow path, which forgets the
    // digests), or every answer naming only the followed trip.
    let ownTripID = ["", "trip-000042", "trip-9"][Int(seed % 3)]
    var generator = Generator(state: seed &* 7919)
    var digested = Self.polling()
    var whole = Self.polling()
    var reference = SampleTrips.fullyPopulated
    var previous: [UInt8] = []
    var held = TripWireDigests()
    var answersWithFieldsLeftOut = 0
    for step in 0..<250 {
      var bytes: [UInt8]
      if !previous.isEmpty, Int.random(in: 0..<4, using: &generator) == 0 {
        // The same answer again, as a poll of a trip standing still gets.
        bytes = previous
      } else {
        var response = reference
        for mutate in TripMergeEquivalenceTests.mutations { mutate(&response, &generator) }
        // A terminal status ends the loop; the sequence goes on.
        if response.tripStatus.isTerminal { response.tripStatus = .enrouteToDropoff }
        bytes = response.serializedBytes()
      }
      var scan = try #require(TripWireDigests.Scan(of: bytes))
      if !previous.isEmpty, !scan.unchanged(since: held).isEmpty { answersWithFieldsLeftOut += 1 }
      held.update(from: &scan)

      let fromDigested = try Self.digested(&digested, bytes, ownTripID: ownTripID)
      let fromWhole = try Self.whole(&whole, bytes, ownTripID: ownTripID)
      // Compared as a Bool: the actions print whole trips.
      let sameEvents = fromDigested == fromWhole
      #expect(sameEvents, "seed \(seed), step \(step)")
      let trip = try #require(digested.trip)
      let wholeTrip = try #require(whole.trip)
      let sameTrip = trip == wholeTrip
      #expect(sameTrip, "seed \(seed), step \(step)")
      let sameBytes = trip.serializedBytes() == wholeTrip.serializedBytes()
      #expect(sameBytes, "seed \(seed), step \(step)")
      reference = wholeTrip
      previous = bytes
      _ = digested.pollDue(generation: 1)
      _ = whole.pollDue(generation: 1)
    }
    // The comparison is worth something only if fields were left out.
    #expect(answersWithFieldsLeftOut > 150, "seed \(seed)")
  }

  @Test(
    "answers that change one remaining waypoint at a time, merged with the others left out and whole, agree",
    arguments: 0..<6)
  func waypointSequences(seed: UInt64) throws {
    var generator = Generator(state: seed &* 104_729 &+ 1)
    var digested = Self.polling()
    var whole = Self.polling()
    // As polls send it: the paths and traffic left out, the held versions unchanged.
    var answer = SampleTrips.fullyPopulated
    let stops = answer.remainingWaypoints
    var waypointsLeftOut = 0
    var stopsLeftOut = 0
    var held = TripWireDigests()
    for step in 0..<250 {
      var list = answer.remainingWaypoints
      if step > 0 {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0, 1, 2, 3:
          // One waypoint's times move (the usual poll: the first one's).
          let index = Int.random(in: 0..<max(list.count, 1), using: &generator)
          if index < list.count {
            list[index].duration = GoogleProtobuf.Duration()
            list[index].duration!.seconds = Int64.random(in: 1...900, using: &generator)
          }
        case 4: if list.count > 1 { list.removeFirst() }
        case 5: if let first = list.first { list.append(first) }
        case 6: list.reverse()
        case 7: list = stops
        case 8: answer.remainingWaypointsRouteVersion!.seconds += 1
        default: break
        }
      }
      for index in list.indices where step > 0 || index > 0 {
        list[index].pathToWaypoint = []
        list[index].encodedPathToWaypoint = ""
        list[index].trafficToWaypoint = nil
      }
      answer.remainingWaypoints = list
      let bytes = answer.serializedBytes()
      var scan = try #require(TripWireDigests.Scan(of: bytes))
      let leftOut = scan.unchanged(since: held)
      if step > 0, leftOut.waypoints != 0 { waypointsLeftOut += 1 }
      if step > 0, leftOut.stops != 0 { stopsLeftOut += 1 }
      held.update(from: &scan)
      let fromDigested = try Self.digested(&digested, bytes, ownTripID: "trip-000042")
      let fromWhole = try Self.whole(&whole, bytes, ownTripID: "trip-000042")
      let sameEvents = fromDigested == fromWhole
      #expect(sameEvents, "seed \(seed), step \(step)")
      let trip = try #require(digested.trip)
      let wholeTrip = try #require(whole.trip)
      let sameTrip = trip == wholeTrip && trip.serializedBytes() == wholeTrip.serializedBytes()
      #expect(sameTrip, "seed \(seed), step \(step)")
      _ = digested.pollDue(generation: 1)
      _ = whole.pollDue(generation: 1)
    }
    #expect(waypointsLeftOut > 60, "seed \(seed)")
    // Waypoints that send no path but a changed time keep their stop out of the decode.
    #expect(stopsLeftOut > 60, "seed \(seed)")
  }

  @Test(
    "a waypoint that sends its distance and times but no path or traffic has its stop left out")
  func stopsLeftOutBesideDistance() throws {
    // As fleet-sim answers: every waypoint sends distance_meters (6), eta and duration; only
    // the first sends its path. The first's duration moves between the answers.
    var answer = SampleTrips.fullyPopulated
    for index in answer.remainingWaypoints.indices {
      answer.remainingWaypoints[index].distanceMeters = 1_000 * Int32(index + 1)
      answer.remainingWaypoints[index].duration = GoogleProtobuf.Duration()
      answer.remainingWaypoints[index].duration!.seconds = 60
      guard index > 0 else { continue }
      answer.remainingWaypoints[index].pathToWaypoint = []
      answer.remainingWaypoints[index].encodedPathToWaypoint = ""
      answer.remainingWaypoints[index].trafficToWaypoint = nil
    }
    try #require(answer.remainingWaypoints.count > 1)
    var held = TripWireDigests()
    var first = try #require(TripWireDigests.Scan(of: answer.serializedBytes()))
    held.update(from: &first)
    for index in answer.remainingWaypoints.indices {
      answer.remainingWaypoints[index].duration!.seconds = 59
    }
    let second = try #require(TripWireDigests.Scan(of: answer.serializedBytes()))
    let leftOut = second.unchanged(since: held)
    let all: UInt64 = (1 << UInt64(answer.remainingWaypoints.count)) - 1
    // Every waypoint changed; all but the first, which sends its path, keep their stop.
    #expect(leftOut.waypoints == 0)
    #expect(leftOut.stops == all & ~1)

    // Traffic (10) is a path's: a waypoint that sends it keeps its stop in the answer.
    answer.remainingWaypoints[1].trafficToWaypoint =
      SampleTrips.fullyPopulated.remainingWaypoints[0].trafficToWaypoint
    try #require(answer.remainingWaypoints[1].trafficToWaypoint != nil)
    var third = try #require(TripWireDigests.Scan(of: answer.serializedBytes()))
    held.update(from: &third)
    for index in answer.remainingWaypoints.indices {
      answer.remainingWaypoints[index].duration!.seconds = 58
    }
    let fourth = try #require(TripWireDigests.Scan(of: answer.serializedBytes()))
    #expect(fourth.unchanged(since: held).stops == all & ~0b11)
  }

  @Test("an answer that starts naming another trip's stop is hidden as when unpacked whole")
  func otherTripAppears() throws {
    var digested = Self.polling()
    var whole = Self.polling()
    var answer = SampleTrips.fullyPopulated
    for _ in 0..<2 {
      let bytes = answer.serializedBytes()
      _ = try Self.digested(&digested, bytes, ownTripID: "trip-000042")
      _ = try Self.whole(&whole, bytes, ownTripID: "trip-000042")
      _ = digested.pollDue(generation: 1)
      _ = whole.pollDue(generation: 1)
    }
    // A shared ride: another rider's pickup comes first, every other field as it was.
    var other = answer.remainingWaypoints[0]
    other.tripID = "trip-000043"
    other.location?.tripID = "trip-000043"
    answer.remainingWaypoints.insert(other, at: 0)
    let bytes = answer.serializedBytes()
    let fromDigested = try Self.digested(&digested, bytes, ownTripID: "trip-000042")
    let fromWhole = try Self.whole(&whole, bytes, ownTripID: "trip-000042")
    let sameEvents = fromDigested == fromWhole
    #expect(sameEvents)
    let trip = try #require(digested.trip)
    #expect(trip.remainingWaypoints.allSatisfy { $0.tripID == "trip-000042" })
    #expect(trip == whole.trip)
  }

  @Test("a versioned part repeated while its version moves is kept, not read as emptied")
  func versionMoved() throws {
    var digested = Self.polling()
    var whole = Self.polling()
    var answer = SampleTrips.fullyPopulated
    for follower in [0, 1] {
      let bytes = answer.serializedBytes()
      _ =
        try follower == 0
        ? Self.digested(&digested, bytes, ownTripID: "") : Self.whole(&whole, bytes, ownTripID: "")
    }
    _ = digested.pollDue(generation: 1)
    _ = whole.pollDue(generation: 1)
    // Route, traffic, waypoints and destinations sent again, byte for byte, each with its
    // version moved.
    answer.currentRouteSegmentVersion!.seconds += 1
    answer.currentRouteSegmentTrafficVersion!.seconds += 1
    answer.remainingWaypointsRouteVersion!.seconds += 1
    answer.intermediateDestinationsVersion!.seconds += 1
    let bytes = answer.serializedBytes()
    _ = try Self.digested(&digested, bytes, ownTripID: "")
    _ = try Self.whole(&whole, bytes, ownTripID: "")
    let trip = try #require(digested.trip)
    #expect(!trip.route.isEmpty)
    #expect(trip.currentRouteSegmentTraffic != nil)
    #expect(!trip.remainingWaypoints[0].pathToWaypoint.isEmpty)
    #expect(!trip.intermediateDestinations.isEmpty)
    #expect(trip == whole.trip)
  }

  @Test("an answer out of serializer order is unpacked whole, and its last name wins")
  func outOfOrder() throws {
    var digested = Self.polling()
    var whole = Self.polling()
    let first = SampleTrips.fullyPopulated.serializedBytes()
    _ = try Self.digested(&digested, first, ownTripID: "")
    _ = try Self.whole(&whole, first, ownTripID: "")
    _ = digested.pollDue(generation: 1)
    _ = whole.pollDue(generation: 1)
    // Field 1 (name) again after the others: "providers/p/trips/z".
    let name = Array("providers/p/trips/z".utf8)
    let bytes = first + [0x0A, UInt8(name.count)] + name
    #expect(TripWireDigests.Scan(of: bytes) == nil)
    _ = try Self.digested(&digested, bytes, ownTripID: "")
    _ = try Self.whole(&whole, bytes, ownTripID: "")
    #expect(digested.trip?.name == "providers/p/trips/z")
    #expect(digested.trip == whole.trip)
  }

  @Test("an answer whose changed field does not decode fails as unpacking it whole does")
  func undecodable() throws {
    var digested = Self.polling()
    var whole = Self.polling()
    var answer = SampleTrips.fullyPopulated
    let first = answer.serializedBytes()
    _ = try Self.digested(&digested, first, ownTripID: "")
    _ = try Self.whole(&whole, first, ownTripID: "")
    _ = digested.pollDue(generation: 1)
    _ = whole.pollDue(generation: 1)
    // Only the vehicle ID changes, to bytes that are not UTF-8 (0xC3 0xA9 becomes 0xC3 0x28).
    answer.vehicleID = "\u{E9}"
    var bytes = answer.serializedBytes()
    let at = try #require(
      bytes.indices.dropLast().first { bytes[$0] == 0xC3 && bytes[$0 + 1] == 0xA9 })
    bytes[at + 1] = 0x28
    let fromDigested = #expect(throws: ProtoDecodingError.self) {
      try Self.digested(&digested, bytes, ownTripID: "")
    }
    let fromWhole = #expect(throws: ProtoDecodingError.self) {
      try Self.whole(&whole, bytes, ownTripID: "")
    }
    #expect(fromDigested == fromWhole)
    #expect(digested.trip == SampleTrips.fullyPopulated)
  }

  @Test("a top level that does not parse has no digests")
  func malformed() {
    let bytes = SampleTrips.fullyPopulated.serializedBytes()
    #expect(TripWireDigests.Scan(of: Array(bytes.dropLast())) == nil)
    // A group (wire type 3) at the top level.
    #expect(TripWireDigests.Scan(of: [0x0B, 0x0C]) == nil)
    // Field number 0.
    #expect(TripWireDigests.Scan(of: [0x00, 0x01]) == nil)
    #expect(TripWireDigests.Scan(of: bytes) != nil)
  }
}

extension TripWireDigests.Scan {
  /// The digests of `bytes`; nil when they are not to be used.
  fileprivate init?(of bytes: [UInt8]) {
    self.init()
    guard bytes.withUnsafeBytes({ read($0) }) else { return nil }
  }
}
