import FleetConsumer
import FleetSimulator
import Foundation
import Testing

/// Following through the trip feed when the server's stream limit cannot hold every trip:
/// the feed keeps to what the connections hold, and the trips beyond it poll rather than
/// wait, silently, for a stream that may not free for the whole trip.
@Suite("The trip feed at the server's stream limit")
struct FeedCapacityTests {
  @Test("more trips than the connections' streams: every trip updates, the rest by polling")
  func moreTripsThanStreams() async throws {
    var simulatorOptions = SimulatorOptions()
    // 30 simulated seconds a second: NEW for 4 s, then on the way to the pickup for long
    // after the test is done, so no feed stream ends (and frees its place) meanwhile.
    simulatorOptions.timeScale = 30
    simulatorOptions.maxConcurrentStreams = 4
    let simulator = try await FleetSimulator.start(
      host: "127.0.0.1", port: 0, options: simulatorOptions)
    let names = try simulator.createTrips(count: 10, providerID: "sim-provider")
    var options = TripService.Options()
    options.followsTripFeed = true
    options.pollInterval = .milliseconds(100)
    // Two connections of 4 streams: 8, less 2 kept for polls, so 6 trips get a stream.
    options.maxConnections = 2
    let service = try TripService(
      configuration: .init(
        endpoint: try .init(simulator.endpoint), transportSecurity: .plaintext,
        providerID: "sim-provider",
        accessTokenProvider: FixedAccessTokenProvider(AccessToken("sim-token")),
        options: options))
    let subscribers = try names.map { name in
      let subscriber = RecordingSubscriber()
      try service.tripModel(forTripName: name).register(subscriber)
      return subscriber
    }
    // A trip whose stream waited behind the others would show NEW and then nothing.
    for (name, subscriber) in zip(names, subscribers) {
      let events = try await subscriber.wait("\(name) on its way to the pickup", timeout: .seconds(20)) {
        $0.contains { if case .tripStatus(.enrouteToPickup) = $0 { true } else { false } }
      }
      let failures = events.filter { if case .updateFailed = $0 { true } else { false } }
      #expect(failures.isEmpty, "\(name): \(failures)")
    }
    service.shutdown()
    await simulator.shutdown()
  }
}
