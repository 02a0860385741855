import Testing

@testable import FleetConsumer

/// A service's event loops (`Options.eventLoops`, `Options.tripsPerEventLoop`): loops start
/// as the trips need them, models are spread over them, each loop has its own connection,
/// and every model still gets its whole lifecycle in order.
@Suite("Event loops of a service")
struct EventLoopsTests {
  @Test(
    "models take the loops in turn; each loop has its own connection; every trip completes",
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
    // In turn: model i is on lane i mod loops.
    #expect(service.core.lanes.count == loops)
    for (index, model) in models.enumerated() {
      #expect(model.lane === service.core.lanes[index % loops])
    }
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

  @Test("a loop takes tripsPerEventLoop models before the next starts; then the fewest; a model gone frees its place")
  func fill() throws {
    var options = TripService.Options()
    options.eventLoops = 3
    options.tripsPerEventLoop = 2
    let service = try TripService(configuration: Self.configuration(options))
    var models: [TripModel?] = try (0..<8).map {
      try service.tripModel(forTripName: "providers/p/trips/fill-\($0)")
    }
    let lanes = service.core.lanes
    #expect(lanes.count == 3)
    let laneOf = { (index: Int) in lanes.firstIndex { $0 === models[index]!.lane } }
    #expect((0..<8).map(laneOf) == [0, 0, 1, 1, 2, 2, 0, 1])
    #expect(lanes.map(\.modelCount) == [3, 3, 2])
    // Two models of lane 0 go: it has room again, and comes first.
    models[0] = nil
    models[6] = nil
    #expect(lanes.map(\.modelCount) == [1, 3, 2])
    let next = try service.tripModel(forTripName: "providers/p/trips/fill-next")
    #expect(next.lane === lanes[0])
    _ = models
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
    #expect(service.core.lanes.map(\.modelCount) == [3, 2, 2, 2])
    _ = models
    #expect(TripService.Options().eventLoops == TripService.Options.availableCores)
    #expect(TripService.Options().tripsPerEventLoop == 10_000)
    #expect(TripService.Options.availableCores >= 1)
  }

  static func configuration(_ options: TripService.Options) -> TripService.Configuration {
    .init(
      endpoint: .init(host: "127.0.0.1", port: 9), transportSecurity: .plaintext,
      providerID: "p", accessTokenProvider: FixedAccessTokenProvider(AccessToken("t")),
      options: options)
  }
}
