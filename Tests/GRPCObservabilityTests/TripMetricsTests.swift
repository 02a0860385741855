import FleetConsumer
import FleetSimulator
import GRPCWire
import MetricsTestKit
import Testing

/// The trip layer's own metrics, from real follows of the simulator's trips.
@Suite("Trip metrics", .timeLimit(.minutes(1)))
struct TripMetricsTests {
  @Test("fleetconsumer.trips.followed, trip.updates and trip.errors by category")
  func followedUpdatesErrors() async throws {
    let metrics = TestMetrics()
    let simulator = try await FleetSimulator.start()
    let name = try simulator.createDemoTrip()
    let service = try TripService(
      configuration: .init(
        endpoint: try .init(simulator.endpoint), transportSecurity: .plaintext,
        providerID: "demo-provider", accessTokenProvider: FixedAccessTokenProvider(AccessToken("t")),
        metricsFactory: metrics))
    // Each model follows while its iterator (a subscriber) lives.
    var following: [TripModelUpdates.Iterator] = []
    for trip in [name, "providers/demo-provider/trips/no-such-trip"] {
      var updates = try service.tripModel(forTripName: trip).updates(includingRefreshes: true)
        .makeAsyncIterator()
      polled: while let event = await updates.next() {
        switch event {
        case .refreshed, .updateFailed: break polled
        default: continue
        }
      }
      following.append(updates)
    }
    let followed = try metrics.expectMeter("fleetconsumer.trips.followed")
    #expect(followed.values.last == 2, "\(followed.values)")
    #expect(try metrics.expectCounter("fleetconsumer.trip.updates").totalValue >= 1)
    let clientErrors = try metrics.expectCounter(
      "fleetconsumer.trip.errors", [("category", "client")])
    #expect(clientErrors.totalValue >= 1, "NOT_FOUND is the caller's to fix")
    following.removeAll()
    #expect(followed.values.last == 0, "models without subscribers stop: \(followed.values)")
    service.shutdown()
    await simulator.shutdown(gracePeriod: .seconds(1))
  }
}
