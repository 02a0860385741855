import FleetConsumer
import FleetSimulator
import Foundation
import Testing

/// The properties added for Consumer SDK parity, produced by the package's own simulator
/// (in this process, over real HTTP/2) rather than scripted: a trip through three
/// intermediate destinations, a vehicle reassigned on the way to the pickup, and a shared
/// ride seen with the privacy option on and off.
@Suite("Consumer SDK parity on the simulator")
struct SimulatedParityTests {
  /// 15 simulated minutes in about 4 s; NEW for half a second.
  private static func simulator() async throws -> FleetSimulator {
    var options = SimulatorOptions()
    options.timeScale = 240
    return try await FleetSimulator.start(host: "127.0.0.1", port: 0, options: options)
  }

  private static func service(_ simulator: FleetSimulator, hidesOtherTrips: Bool = true) throws
    -> TripService
  {
    var options = TripService.Options()
    options.pollInterval = .milliseconds(100)
    options.hidesOtherTrips = hidesOtherTrips
    return try TripService(
      configuration: .init(
        endpoint: try .init(simulator.endpoint), transportSecurity: .plaintext,
        providerID: "demo-provider",
        accessTokenProvider: FixedAccessTokenProvider(AccessToken("demo-token")),
        options: options))
  }

  /// Every event of `name` until the trip ends (at most a minute).
  private static func follow(_ service: TripService, _ name: String) async throws
    -> [TripModelEvent]
  {
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    return try await subscriber.wait("\(name) to end", timeout: .seconds(60)) {
      $0.contains(.stateChanged(.inactive))
    }
  }

  @Test("three intermediate destinations: the index goes 0, 1, 2 and the remaining route shrinks")
  func multiStop() async throws {
    let simulator = try await Self.simulator()
    let name = try simulator.createDemoTrip(intermediateDestinations: 3)
    let events = try await Self.follow(try Self.service(simulator), name)
    await simulator.shutdown(gracePeriod: .seconds(1))
    let indices = events.compactMap { event -> Int32?? in
      if case .intermediateDestinationIndex(let index) = event { return index }
      return nil
    }
    #expect(indices == [0, 1, 2])
    let distances = events.compactMap { event -> Int32?? in
      if case .remainingRouteDistance(let meters) = event { return meters }
      return nil
    }
    // Known while stops are left beyond the next one, shrinking to 0 on the last leg.
    let known = distances.compactMap { $0 }
    #expect(known.count >= 4, "\(distances)")
    #expect(known == known.sorted(by: >), "\(distances)")
    #expect(known.last == 0)
    #expect(events.contains(.tripStatus(.complete)))
    #expect(!events.contains { $0.error != nil })
  }

  @Test("a vehicle reassigned on the way to the pickup: vehicleID reported twice, the new one last")
  func reassigned() async throws {
    let simulator = try await Self.simulator()
    // 240 simulated seconds after creation: after NEW (120 s), on the way to the pickup.
    let name = try simulator.createDemoTrip(
      reassignment: PlannedReassignment(after: .seconds(240), vehicleID: "car-b"))
    let events = try await Self.follow(try Self.service(simulator), name)
    await simulator.shutdown(gracePeriod: .seconds(1))
    let vehicles = events.compactMap { event -> String? in
      if case .vehicleID(let id) = event { return id }
      return nil
    }
    #expect(vehicles.count == 2, "\(vehicles)")
    #expect(vehicles.last == "car-b")
    #expect(Set(vehicles).count == 2)
    #expect(events.contains(.tripStatus(.complete)))
  }

  @Test("a shared ride: a rider sees only its own stops unless told otherwise")
  func shared() async throws {
    let simulator = try await Self.simulator()
    let names = try simulator.createSharedDemoTrips()
    let ids = names.map { String($0.split(separator: "/").last!) }
    async let privateView = Self.follow(try Self.service(simulator), names[1])
    async let fullView = Self.follow(try Self.service(simulator, hidesOtherTrips: false), names[1])
    let (seen, all) = try await (privateView, fullView)
    await simulator.shutdown(gracePeriod: .seconds(1))

    func waypointOwners(_ events: [TripModelEvent]) -> Set<String> {
      var owners: Set<String> = []
      for case .tripUpdated(let trip, _) in events {
        owners.formUnion(trip.remainingWaypoints.map(\.tripID))
        owners.formUnion(trip.vehicleWaypoints.map(\.tripID))
      }
      return owners
    }
    #expect(waypointOwners(seen) == [ids[1]])
    #expect(waypointOwners(all) == Set(ids))
    #expect(seen.contains(.tripType(.shared)))
    #expect(seen.contains { if case .numberOfPassengers = $0 { true } else { false } })
    #expect(seen.contains(.tripStatus(.complete)) && all.contains(.tripStatus(.complete)))
  }
}
