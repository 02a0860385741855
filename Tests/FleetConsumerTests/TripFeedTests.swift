import FleetConsumer
import Foundation
import Testing

/// Following through FleetConsumer's streaming trip feed (`WatchTrip`) where the server offers
/// it, and falling back to `GetTrip` polling where it answers UNIMPLEMENTED.
@Suite("Following through the streaming trip feed", .fakeFleetEngine)
struct TripFeedTests {
  private func feedService(_ engine: FakeFleetEngine) throws -> TripService {
    try FleetTest.service(engine) { $0.followsTripFeed = true }
  }

  @Test("where the server offers the feed, every update arrives through one stream")
  func streams() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let feed = Lifecycle.steps(tripName: name).map { $0.delayed(30) }
    try engine.add([name: [.error("INTERNAL", "GetTrip must not be called")]], feeds: [name: feed])
    let service = try feedService(engine)
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    let events = try await subscriber.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }
    #expect(events.map(\.summary) == Lifecycle.expectedSummaries)
    await model.loopEnded()
    #expect(engine.requests(for: name).isEmpty)
    let stream = try #require(try await engine.waitForStreams(1, for: name).first)
    #expect(stream.sent == 6)
    #expect(stream.authorization == "Bearer test-token")
    #expect(stream.view == "JOURNEY_SHARING_V1S")
  }

  @Test("a stream that fails is reported and reopened with the versions already held")
  func reconnects() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    var feed = Lifecycle.steps(tripName: name)
    feed.insert(.error("UNAVAILABLE", "the feed restarted"), at: 2)
    try engine.add([name: [.error("INTERNAL", "GetTrip must not be called")]], feeds: [name: feed])
    let service = try feedService(engine)
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    let events = try await subscriber.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }
    #expect(events.compactMap(\.error).map(\.code) == [.unavailable])
    #expect(events.map(\.summary).filter { !$0.hasPrefix("failed") } == Lifecycle.expectedSummaries)
    let streams = try await engine.waitForStreams(2, for: name)
    #expect(streams[0].answer == "UNAVAILABLE")
    #expect(streams[0].sent == 2)
    #expect(streams[0].currentRouteSegmentVersion == nil)
    #expect(streams[1].currentRouteSegmentVersion == "\(Lifecycle.start + 10).000000000")
    #expect(streams[1].sent == 4)
  }

  @Test("a server without the feed answers UNIMPLEMENTED once; then the service polls, silently")
  func fallsBackToPolling() async throws {
    let engine = try SharedFakeEngine.engine()
    let first = FakeScript.tripName()
    let second = FakeScript.tripName()
    try engine.add([
      first: Lifecycle.steps(tripName: first), second: [.trip(["tripStatus": "COMPLETE"])],
    ])
    let service = try feedService(engine)
    let model = try service.tripModel(forTripName: first)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    let events = try await subscriber.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }
    #expect(events.map(\.summary) == Lifecycle.expectedSummaries)
    #expect(try await engine.waitForStreams(1, for: first).map(\.answer) == ["UNIMPLEMENTED"])
    #expect(try await engine.waitForRequests(6, for: first).count == 6)

    // The service remembers: the next model polls without trying the feed.
    let other = try service.tripModel(forTripName: second)
    var statuses: [String] = []
    for await event in other.updates { statuses.append(event.summary) }
    #expect(statuses.contains("tripStatus(COMPLETE)"))
    #expect(engine.streams(for: second).isEmpty)
  }
}
