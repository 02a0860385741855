import FleetProtosFixtures
import Testing
@_spi(GeneratedCode) import ProtoRuntime

@testable import FleetConsumer

/// The merge takes a decoded response, keeping what the wire says is the held value; these
/// hold it to the merge it replaced (`referenceMerged(with:)`, a whole decoded response
/// merged field by field) over sequences of generated responses: partial, unchanged, changed,
/// with and without waypoint paths, strings spelled differently but canonically equal.
@Suite("Merging in place gives what merging a decoded response gave")
struct TripMergeEquivalenceTests {
  /// SplitMix64: the same sequences on every run.
  struct Generator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  typealias Mutation = (inout FleetEngine.Trip, inout Generator) -> Void

  /// Leaves the field (a third of the time), clears it, or changes it.
  private static func field<Value>(
    _ path: WritableKeyPath<FleetEngine.Trip, Value>, cleared: Value,
    changed: @escaping (Value, inout Generator) -> Value
  ) -> Mutation {
    { trip, generator in
      switch Int.random(in: 0..<3, using: &generator) {
      case 1: trip[keyPath: path] = cleared
      case 2: trip[keyPath: path] = changed(trip[keyPath: path], &generator)
      default: break
      }
    }
  }

  /// A message changed in a way every message allows: an unknown field added (field 999,
  /// varint), so nested unknown fields are compared too.
  private static func withUnknown<M: ProtoMessage>(_ message: M) -> M {
    let bytes = message.serializedBytes() + [0xB8, 0x3E, 0x01]
    return try! M(serializedBytes: bytes)
  }

  private static func message<M: ProtoMessage>(_ message: M?, _ g: inout Generator) -> M? {
    withUnknown(message ?? M())
  }

  private static func time(_ t: GoogleProtobuf.Timestamp?, _ g: inout Generator)
    -> GoogleProtobuf.Timestamp?
  {
    var t = t ?? GoogleProtobuf.Timestamp()
    t.seconds += Int64.random(in: 1...3, using: &g)
    return t
  }

  /// One of: drop the last, repeat the first, reverse, or an element given an unknown field.
  private static func list<M: ProtoMessage>(_ list: [M], _ g: inout Generator) -> [M] {
    guard let first = list.first else { return [withUnknown(M())] }
    switch Int.random(in: 0..<4, using: &g) {
    case 0: return Array(list.dropLast())
    case 1: return list + [first]
    case 2: return list.reversed()
    default: return [withUnknown(first)] + list.dropFirst()
    }
  }

  /// A string changed, or respelled: "é" as one scalar or as "e" and a combining accent,
  /// which Swift's `==` equates and the wire does not.
  private static func text(_ s: String, _ g: inout Generator) -> String {
    switch Int.random(in: 0..<3, using: &g) {
    case 0: return s + "x"
    case 1: return s + "\u{E9}"
    default: return s + "e\u{301}"
    }
  }

  static var mutations: [Mutation] {
    [
    field(\.name, cleared: "", changed: text),
    field(\.vehicleID, cleared: "", changed: text),
    field(\.tripStatus, cleared: .unknownTripStatus) { _, g in
      [.new, .enrouteToPickup, .arrivedAtPickup, .complete].randomElement(using: &g)!
    },
    field(\.tripType, cleared: .unknownTripType) { _, g in
      [.shared, .exclusive].randomElement(using: &g)!
    },
    field(\.pickupPoint, cleared: nil, changed: message),
    field(\.actualPickupPoint, cleared: nil, changed: message),
    field(\.actualPickupArrivalPoint, cleared: nil, changed: message),
    field(\.pickupTime, cleared: nil, changed: time),
    field(\.intermediateDestinations, cleared: [], changed: list),
    field(\.intermediateDestinationsVersion, cleared: nil, changed: time),
    field(\.intermediateDestinationIndex, cleared: 0) { v, _ in v + 1 },
    field(\.actualIntermediateDestinationArrivalPoints, cleared: [], changed: list),
    field(\.actualIntermediateDestinations, cleared: [], changed: list),
    field(\.dropoffPoint, cleared: nil, changed: message),
    field(\.actualDropoffPoint, cleared: nil, changed: message),
    field(\.dropoffTime, cleared: nil, changed: time),
    waypoints,
    field(\.remainingWaypointsVersion, cleared: nil, changed: time),
    field(\.remainingWaypointsRouteVersion, cleared: nil, changed: time),
    field(\.vehicleWaypoints, cleared: [], changed: list),
    field(\.route, cleared: [], changed: list),
    field(\.currentRouteSegment, cleared: "", changed: text),
    field(\.currentRouteSegmentVersion, cleared: nil, changed: time),
    field(\.currentRouteSegmentTraffic, cleared: nil, changed: message),
    field(\.currentRouteSegmentTrafficVersion, cleared: nil, changed: time),
    field(\.currentRouteSegmentEndPoint, cleared: nil, changed: message),
    field(\.remainingDistanceMeters, cleared: nil) { v, g in
      (v ?? 0) - Int32.random(in: 1...50, using: &g)
    },
    field(\.etaToFirstWaypoint, cleared: nil, changed: time),
    field(\.remainingTimeToFirstWaypoint, cleared: nil, changed: message),
    field(\.numberOfPassengers, cleared: 0) { v, _ in v + 1 },
    field(\.lastLocation, cleared: nil, changed: message),
    field(\.lastLocationSnappable, cleared: false) { v, _ in !v },
    field(\.view, cleared: .unspecified) { _, _ in .journeySharingV1s },
    field(\.attributes, cleared: [], changed: list),
    { trip, g in
      if Bool.random(using: &g) { trip = withUnknown(trip) }
    },
    ]
  }

  /// The remaining waypoints as a poll sends them: usually without their paths and traffic
  /// (unchanged since the held route version), sometimes with them, sometimes reordered,
  /// repeated or with a stop changed.
  private static func waypoints(_ trip: inout FleetEngine.Trip, _ g: inout Generator) {
    switch Int.random(in: 0..<6, using: &g) {
    case 0, 1, 2:
      for index in trip.remainingWaypoints.indices {
        trip.remainingWaypoints[index].pathToWaypoint = []
        trip.remainingWaypoints[index].encodedPathToWaypoint = ""
        trip.remainingWaypoints[index].trafficToWaypoint = nil
      }
      // A waypoint's own numbers, as time passes: its ETA, distance (or none), duration, or
      // an unknown field.
      if Bool.random(using: &g), !trip.remainingWaypoints.isEmpty {
        let index = Int.random(in: trip.remainingWaypoints.indices, using: &g)
        switch Int.random(in: 0..<4, using: &g) {
        case 0: trip.remainingWaypoints[index].eta = time(trip.remainingWaypoints[index].eta, &g)
        case 1:
          trip.remainingWaypoints[index].distanceMeters =
            Bool.random(using: &g) ? nil : Int32.random(in: 0...50_000, using: &g)
        case 2:
          var duration = trip.remainingWaypoints[index].duration ?? GoogleProtobuf.Duration()
          duration.seconds += Int64.random(in: 1...3, using: &g)
          trip.remainingWaypoints[index].duration = duration
        default: trip.remainingWaypoints[index] = withUnknown(trip.remainingWaypoints[index])
        }
      }
    case 3: trip.remainingWaypoints = list(trip.remainingWaypoints, &g)
    case 4: trip.remainingWaypoints = []
    default: break
    }
  }

  @Test("sequences of generated responses, each merged both ways", arguments: 0..<8)
  func sequences(seed: UInt64) throws {
    var generator = Generator(state: seed)
    var inPlace = SampleTrips.fullyPopulated
    var reference = SampleTrips.fullyPopulated
    for step in 0..<250 {
      var response = reference
      for mutate in Self.mutations { mutate(&response, &generator) }
      let before = inPlace
      // The generated comparison agrees with decoding (the trips hold no map and no -0.0).
      let matches = response.withCMessage { c in before.matches(cMessage: c) }
      #expect(matches == (response.serializedBytes() == before.serializedBytes()))
      // The merge tells which properties changed as diffing the whole trips would.
      var merged = inPlace
      let changed = merged.merge(response.decodedAgain())
      #expect(changed == TripChanges(from: inPlace, to: merged).fields, "seed \(seed), step \(step)")
      inPlace = merged
      reference = reference.referenceMerged(with: response)
      #expect(inPlace == reference, "seed \(seed), step \(step)")
      // Byte for byte: Swift's == equates canonically equivalent strings.
      let sameBytes = inPlace.serializedBytes() == reference.serializedBytes()
      #expect(sameBytes, "seed \(seed), step \(step)")
      // What the in-place merge kept unchanged, it kept as it was: the unchanged answer of
      // the next step then compares at once.
      if response.serializedBytes() == before.serializedBytes() {
        let kept = inPlace.serializedBytes() == before.serializedBytes()
        #expect(kept, "seed \(seed), step \(step)")
      }
    }
  }

  @Test("a response that repeats the held trip (paths left out) changes nothing")
  func repeatedPoll() {
    var held = SampleTrips.fullyPopulated
    held.shareFirstPathWithRoute()
    var response = held
    for index in response.remainingWaypoints.indices {
      response.remainingWaypoints[index].pathToWaypoint = []
      response.remainingWaypoints[index].encodedPathToWaypoint = ""
      response.remainingWaypoints[index].trafficToWaypoint = nil
    }
    response.route = []
    response.currentRouteSegment = ""
    response.currentRouteSegmentTraffic = nil
    let merged = held.merged(with: response)
    let unchanged = merged.serializedBytes() == held.serializedBytes()
    #expect(unchanged)
    #expect(merged == held.referenceMerged(with: response))
  }

  @Test("the waypoint update that leaves the path out lists every other field of TripWaypoint")
  func waypointFields() {
    // location, trip_id, waypoint_type, path_to_waypoint, encoded_path_to_waypoint,
    // traffic_to_waypoint, distance_meters, eta, duration: a new field must be added to
    // WaypointNumbers (TripMergePlan+Waypoints.swift), then counted here.
    #expect(FleetEngine.TripWaypoint.cDescriptor.pointee.n_fields == 9)
  }

  @Test("a response that does not decode leaves the held trip as it was")
  func undecodable() throws {
    let held = SampleTrips.fullyPopulated
    var response = held
    response.vehicleID = "vehicle-8"
    response.name = "\u{E9}"
    // The name's bytes made invalid UTF-8 (0xC3 0xA9 becomes 0xC3 0x28): decoding refuses it.
    var bytes = response.serializedBytes()
    let at = try #require(
      bytes.indices.dropLast().first { bytes[$0] == 0xC3 && bytes[$0 + 1] == 0xA9 })
    bytes[at + 1] = 0x28
    var followed = FollowedTrip()
    _ = try held.serializedBytes().withUnsafeBytes { (raw) throws(ProtoDecodingError) in
      try followed.received(bytes: raw, current: true, ownTripID: "", hidesOtherTrips: false)
    }
    #expect(throws: ProtoDecodingError.self) {
      try bytes.withUnsafeBytes { (raw) throws(ProtoDecodingError) in
        try followed.received(bytes: raw, current: true, ownTripID: "", hidesOtherTrips: false)
      }
    }
    let trip = try #require(followed.trip)
    let unchanged = trip.serializedBytes() == held.serializedBytes()
    #expect(unchanged)
  }
}
