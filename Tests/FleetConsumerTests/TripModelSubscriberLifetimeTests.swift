import FleetConsumer
import Foundation
import Testing

/// Subscribers coming and going through the Swift API, against the fake Fleet Engine: one
/// leaving inside its own callback, the last one leaving, one deallocated, and one model per
/// trip name while it lives.
@Suite("Subscribers and models through the Swift API", .fakeFleetEngine)
struct TripModelSubscriberLifetimeTests {
  /// A new trip the fake engine plays ``Lifecycle`` for: the engine, the trip's name, the
  /// service and the trip's model (which keeps what it needs of the service).
  private static func lifecycleModel() throws -> (
    engine: FakeFleetEngine, name: String, service: TripService, model: TripModel
  ) {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: Lifecycle.steps(tripName: name)])
    let service = try FleetTest.service(engine)
    return (engine, name, service, try service.tripModel(forTripName: name))
  }

  @Test("a subscriber that unregisters inside a callback gets nothing after it")
  func unregisterDuringCallback() async throws {
    let (_, _, _, model) = try Self.lifecycleModel()
    let leaving = RecordingSubscriber { subscriber, model, event in
      if case .tripStatus = event { model.unregisterSubscriber(subscriber) }
    }
    let staying = RecordingSubscriber()
    model.register(leaving)
    model.register(staying)
    let all = try await staying.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }
    // It may have registered after the model became active: that change is not replayed.
    #expect(
      all.map(\.summary).filter { $0 != "state(active)" }
        == Array(Lifecycle.expectedSummaries.dropFirst()))
    // The first response's trip update, name and status, then nothing: not even the rest
    // of that response's callbacks.
    #expect(
      leaving.events.map(\.summary) == [
        "state(active)", Lifecycle.expectedSummaries[1], "tripName", "tripStatus(NEW)",
      ])
  }

  @Test("a subscriber unregistered inside another's callback gets nothing after it")
  func unregisteredByAnother() async throws {
    let (_, _, _, model) = try Self.lifecycleModel()
    let last = RecordingSubscriber()
    // Registered first, so it hears each event before the other two do.
    let first = RecordingSubscriber { _, model, event in
      if case .tripStatus = event { model.unregisterSubscriber(last) }
    }
    let middle = RecordingSubscriber()
    model.register(first)
    model.register(middle)
    model.register(last)
    let all = try await middle.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }
    #expect(all.contains(.stateChanged(.inactive)))
    // Up to the first response's status, which `first` heard first: `last` never hears it.
    let heard = last.events.map(\.summary)
    #expect(!heard.contains("tripStatus(NEW)"), "\(heard)")
    #expect(heard.last == "tripName", "\(heard)")
  }

  @Test("when the only subscriber unregisters inside a callback, following stops")
  func lastSubscriberLeavesDuringCallback() async throws {
    let (engine, name, _, model) = try Self.lifecycleModel()
    let subscriber = RecordingSubscriber { subscriber, model, event in
      if case .tripStatus(.enrouteToPickup) = event { model.unregisterSubscriber(subscriber) }
    }
    model.register(subscriber)
    try await subscriber.wait("ENROUTE_TO_PICKUP") { $0.contains(.tripStatus(.enrouteToPickup)) }
    await model.loopEnded()
    #expect(model.state == .inactive)
    #expect(try await engine.waitForRequests(2, for: name).count == 2)
    #expect(subscriber.events.last == .tripStatus(.enrouteToPickup))
  }

  @Test("a subscriber that is deallocated is dropped, and following stops")
  func subscriberGoesAway() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: [.trip(["tripStatus": "NEW"])]])  // repeats: never ends by itself
    let service = try FleetTest.service(engine)
    let model = try service.tripModel(forTripName: name)
    weak var gone: RecordingSubscriber?
    do {
      let subscriber = RecordingSubscriber()
      gone = subscriber
      model.register(subscriber)
      try await subscriber.wait("NEW") { $0.contains(.tripStatus(.new)) }
      try await engine.waitForRequests(2, for: name)
    }
    await model.loopEnded()
    #expect(gone == nil)
    #expect(model.state == .inactive)
    let sent = engine.requests(for: name).count
    // A later register starts again.
    let again = RecordingSubscriber()
    model.register(again)
    try await engine.waitForRequests(sent + 1, for: name)
    model.unregisterSubscriber(again)
    await model.loopEnded()
  }

  @Test("one model per trip name while it is alive")
  func sameModelPerName() async throws {
    let engine = try SharedFakeEngine.engine()
    let service = try FleetTest.service(engine)
    let name = FakeScript.tripName()
    let first = try service.tripModel(forTripName: name)
    #expect(try service.tripModel(forTripName: name) === first)
    let other = try service.tripModel(forTripName: FakeScript.tripName())
    #expect(other !== first)
  }
}
