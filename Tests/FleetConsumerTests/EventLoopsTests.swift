import Testing

@testable import FleetConsumer

/// A service's event loops (`Options.eventLoops`): models are spread over them in turn, each
/// loop has its own connection, and every model still gets its whole lifecycle in order.
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
      $0.hidesOtherTrips = false
    }
    #expect(service.core.lanes.count == loops)
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

  @Test("no more loops than connections, and at least one of each")
  func limits() throws {
    var options = TripService.Options()
    options.eventLoops = 0
    #expect(throws: TripService.ConfigurationError.self) {
      try TripService(configuration: Self.configuration(options))
    }
    options.eventLoops = 6
    options.maxConnections = 4
    let service = try TripService(configuration: Self.configuration(options))
    #expect(service.core.lanes.count == 4)
    #expect(TripService.Options().eventLoops == 1)
    #expect(TripService.Options.availableCores >= 1)
  }

  static func configuration(_ options: TripService.Options) -> TripService.Configuration {
    .init(
      endpoint: .init(host: "127.0.0.1", port: 9), transportSecurity: .plaintext,
      providerID: "p", accessTokenProvider: FixedAccessTokenProvider(AccessToken("t")),
      options: options)
  }
}
