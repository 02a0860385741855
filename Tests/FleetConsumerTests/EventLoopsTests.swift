import Testing

@testable import FleetConsumer

/// A service's event loops (`Options.eventLoops`, `Options.tripsPerEventLoop`): loops start
/// as the trips need them, models are spread over them, each loop has its own connection,
/// and every model still gets its whole lifecycle in order.
@Suite("Event loops of a service")
struct EventLoopsTests {
  @Test(
    "models are spread evenly over the loops; each loop has its own connection; every trip completes",
    arguments: [1, 3])
  func spread(loops: Int) async throws {
    let engine = try await FakeFleetEngine.start(quiet: true)
    let prefix = "providers/\(FleetTest.provider)/trips/lanes-"
    try engine.addTemplate(prefix: prefix, steps: Lifecycle.steps(tripID: "lanes"))
    // One script for every trip, so its waypoints name none of them: keep them all.
    let service = try FleetTest.service(engine) {
      $0.eventLoops = loops
      $0.tripsPerEventLoop = 1
      $0.hidesOtherTrips = false
    }
    #expect(service.core.lanes.isEmpty)
    let trips = 12
    let counter = ThousandTripsTests.CompletionCounter(target: trips)
    var models: [TripModel] = []
    var subscribers: [RecordingSubscriber] = []
    for index in 0..<trips {
      let model = try service.tripModel(forTripName: "\(prefix)\(index)")
      let subscriber = RecordingSubscriber()
      model.register(subscriber)
      model.register(counter)
      models.append(model)
      subscribers.append(subscriber)
    }
    // Evenly: every loop has its share, to one model.
    let counts = service.core.lanes.map(\.modelCount)
    #expect(counts.count == loops)
    #expect(counts.max()! - counts.min()! <= 1)
    await counter.allCompleted()
    for subscriber in subscribers {
      let events = try await subscriber.wait("the trip to end") {
        $0.contains(.stateChanged(.inactive))
      }
      #expect(events.map(\.summary) == Lifecycle.expectedSummaries)
      #expect(subscriber.overlaps == 0)
    }
    for model in models { await model.loopEnded() }
    #expect(engine.connectionCount == loops)
    await engine.stop()
  }

  @Test(
    "a loop takes a tenth of tripsPerEventLoop models per tenth of the interval before the next starts; then the fewest there; a model gone frees its place"
  )
  func fill() throws {
    let core = try Self.core(eventLoops: 3, tripsPerEventLoop: 20)
    // Made at 0.05 s into an interval: bucket 0, where each lane takes 2 before the next
    // starts; then the fewest there.
    let early = (0..<8).map { _ in core.laneForNewModel(at: 10_050_000_000) }
    let lanes = core.lanes
    #expect(lanes.count == 3)
    #expect(early.map { $0.phaseBucket } == Array(repeating: 0, count: 8))
    let laneOf = { (lane: FollowLane) in lanes.firstIndex { $0 === lane }! }
    #expect(early.map { laneOf($0.lane) } == [0, 0, 1, 1, 2, 2, 0, 1])
    // Another tenth of the interval, empty on every lane: the fewest in all takes it.
    let later = core.laneForNewModel(at: 10_450_000_000)
    #expect(later.phaseBucket == 4)
    #expect(later.lane === lanes[2])
    #expect(lanes.map(\.modelCount) == [3, 3, 3])
    // Two of bucket 0's models of lane 0 go: it has the fewest there, and takes the next.
    lanes[0].modelEnded(inBucket: 0)
    lanes[0].modelEnded(inBucket: 0)
    #expect(lanes.map { $0.modelCounts(inBucket: 0).inBucket } == [1, 3, 2])
    #expect(core.laneForNewModel(at: 11_000_000_000).lane === lanes[0])
  }

  @Test("trips made together share the loops; trips spread over the interval stay on one")
  func phases() throws {
    let core = try Self.core(eventLoops: 2, tripsPerEventLoop: 10_000)
    // 10,000 spread evenly over one second: 1,000 in each tenth, one loop.
    for index in 0..<10_000 { _ = core.laneForNewModel(at: UInt64(index) * 100_000) }
    #expect(core.lanes.count == 1)
    // 3,000 more in one tenth, where it has 1,000 already: the second loop starts and takes
    // 1,000, then the two take the rest in turn.
    for index in 0..<3_000 { _ = core.laneForNewModel(at: 5_000_000_000 + UInt64(index)) }
    #expect(core.lanes.map(\.modelCount) == [11_000, 2_000])
    #expect(core.lanes.map { $0.modelCounts(inBucket: 0).inBucket } == [2_000, 2_000])
  }

  @Test("one loop until it has tripsPerEventLoop trips, even with more allowed")
  func oneLoopFirst() throws {
    var options = TripService.Options()
    options.eventLoops = 4
    let service = try TripService(configuration: Self.configuration(options))
    let models = try (0..<50).map {
      try service.tripModel(forTripName: "providers/p/trips/one-\($0)")
    }
    #expect(service.core.lanes.count == 1)
    #expect(models.allSatisfy { $0.lane === service.core.lanes[0] })
  }

  @Test("no more loops than connections, and at least one of each")
  func limits() throws {
    var options = TripService.Options()
    options.eventLoops = 0
    #expect(throws: TripService.ConfigurationError.self) {
      try TripService(configuration: Self.configuration(options))
    }
    options.eventLoops = 1
    options.tripsPerEventLoop = 0
    #expect(throws: TripService.ConfigurationError.self) {
      try TripService(configuration: Self.configuration(options))
    }
    options.eventLoops = 6
    options.tripsPerEventLoop = 1
    options.maxConnections = 4
    let service = try TripService(configuration: Self.configuration(options))
    let models = try (0..<9).map {
      try service.tripModel(forTripName: "providers/p/trips/limit-\($0)")
    }
    #expect(service.core.lanes.count == 4)
    let counts = service.core.lanes.map(\.modelCount)
    #expect(counts.reduce(0, +) == 9 && counts.max()! - counts.min()! <= 1)
    _ = models
    #expect(TripService.Options().eventLoops == TripService.Options.availableCores)
    #expect(TripService.Options().tripsPerEventLoop == 12_000)
    #expect(TripService.Options.availableCores >= 1)
  }

  /// The core of a service polling once a second, whose lanes the tests choose directly.
  static func core(eventLoops: Int, tripsPerEventLoop: Int) throws -> ServiceCore {
    var options = TripService.Options()
    options.eventLoops = eventLoops
    options.tripsPerEventLoop = tripsPerEventLoop
    options.pollInterval = .seconds(1)
    return try TripService(configuration: configuration(options)).core
  }

  static func configuration(_ options: TripService.Options) -> TripService.Configuration {
    .init(
      endpoint: .init(host: "127.0.0.1", port: 9), transportSecurity: .plaintext,
      providerID: "p", accessTokenProvider: FixedAccessTokenProvider(AccessToken("t")),
      options: options)
  }
}
