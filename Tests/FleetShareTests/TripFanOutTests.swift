import FleetConsumer
import FleetShare
import FleetSimulator
import FleetSync
import GRPCWire
import Testing

/// One follow per trip for any number of viewers, against the simulator in this process; its
/// GetTrips are counted by a server interceptor.
@Suite("Fan-out", .timeLimit(.minutes(1)))
struct TripFanOutTests {
  /// Counts the GetTrip calls the simulator serves.
  struct GetTripCounter: ServerInterceptor {
    let count = PosixMutex(0)
    func intercept(_ context: ServerContext, next: (ServerContext) async throws -> Void) async throws {
      if context.method.method == "GetTrip" { count.withLock { $0 += 1 } }
      try await next(context)
    }
  }

  func start(pollInterval: Duration) async throws -> (FleetSimulator, TripService, GetTripCounter, String) {
    let counter = GetTripCounter()
    var options = SimulatorOptions()
    options.interceptors = [counter]
    let simulator = try await FleetSimulator.start(options: options)
    let name = try simulator.createDemoTrip()
    var serviceOptions = TripService.Options()
    serviceOptions.pollInterval = pollInterval
    let service = try TripService(
      configuration: .init(
        endpoint: try .init(simulator.endpoint), transportSecurity: .plaintext,
        providerID: "demo-provider", accessTokenProvider: FixedAccessTokenProvider(AccessToken("t")),
        options: serviceOptions))
    return (simulator, service, counter, name)
  }

  /// The first trip event of `stream`, waiting at most 10 s.
  func firstTrip(_ stream: AsyncStream<TripFanOut.Event>) async throws -> FleetEngine.Trip {
    try await withThrowingTaskGroup(of: FleetEngine.Trip?.self) { group in
      group.addTask {
        for await event in stream { if case .trip(let trip) = event { return trip } }
        return nil
      }
      group.addTask {
        try await Task.sleep(for: .seconds(10))
        return nil
      }
      let first = try await group.next() ?? nil
      group.cancelAll()
      return try #require(first, "no trip within 10 s")
    }
  }

  @Test("N viewers of one trip cost one follow: the GetTrips of N = 200 and 1,000 are those of N = 1", arguments: [1, 200, 1_000])
  func oneFollow(viewers: Int) async throws {
    let (simulator, service, counter, name) = try await start(pollInterval: .milliseconds(200))
    let fanOut = TripFanOut(service: service)
    let streams = try (0..<viewers).map { _ in try fanOut.view(name) }
    #expect(fanOut.followedTrips == 1 && fanOut.viewers(of: name) == viewers)
    _ = try await firstTrip(streams[0])
    let start = counter.count.withLock { $0 }
    let began = ContinuousClock.now
    try await Task.sleep(for: .seconds(2))
    let polls = counter.count.withLock { $0 } - start
    let elapsed = ContinuousClock.now - began
    // One poll per interval for the one model, whatever N: 2 s / 200 ms = 10, give or take
    // the edges.
    let expected = Int((elapsed / .milliseconds(200)).rounded())
    #expect(abs(polls - expected) <= 2, "\(polls) GetTrips in \(elapsed) for \(viewers) viewers")
    _ = streams
    service.shutdown()
    await simulator.shutdown(gracePeriod: .seconds(1))
  }

  @Test("a viewer joining late gets the trip at once; the last one leaving stops the follow")
  func lateJoinerAndLeaving() async throws {
    // Polls 10 s apart: a late viewer's first trip can only be the one already received.
    let (simulator, service, counter, name) = try await start(pollInterval: .seconds(10))
    let fanOut = TripFanOut(service: service)
    var first: AsyncStream<TripFanOut.Event>? = try fanOut.view(name)
    let seen = try await firstTrip(first!)
    let began = ContinuousClock.now
    var late: AsyncStream<TripFanOut.Event>? = try fanOut.view(name)
    let lateTrip = try await firstTrip(late!)
    #expect(ContinuousClock.now - began < .seconds(2))
    #expect(lateTrip == seen)
    #expect(counter.count.withLock { $0 } == 1, "the late viewer must not cause a GetTrip")
    #expect(fanOut.viewers(of: name) == 2)
    first = nil
    late = nil
    try await waitUntil { fanOut.followedTrips == 0 }
    let model = try service.tripModel(forTripName: name)
    #expect(model.state == .inactive)
    _ = (first, late)
    service.shutdown()
    await simulator.shutdown(gracePeriod: .seconds(1))
  }

  func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() {
      guard ContinuousClock.now < deadline else {
        Issue.record("condition not met within 5 s")
        return
      }
      try await Task.sleep(for: .milliseconds(10))
    }
  }
}
