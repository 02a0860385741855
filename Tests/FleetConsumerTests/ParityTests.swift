import Foundation
import Testing

@testable import FleetConsumer

/// Parity with the Consumer SDKs (issue 14) through the Swift API, against the fake Fleet
/// Engine (grpcio with Google's message classes): the properties added to the first twelve,
/// a trip through its intermediate destinations, a shared vehicle with the privacy option on
/// and off, per-model options, refresh, liveness and the end of a trip.
@Suite("Consumer SDK parity through the Swift API", .fakeFleetEngine)
struct ParityTests {
  private func follow(
    _ engine: FakeFleetEngine, _ name: String, subscriber: RecordingSubscriber = .init(),
    pollInterval: Duration = .milliseconds(100),
    configure: (inout TripService.Options) -> Void = { _ in }
  ) throws -> (TripService, TripModel, RecordingSubscriber) {
    let service = try FleetTest.service(engine, pollInterval: pollInterval, configure: configure)
    let model = try service.tripModel(forTripName: name)
    model.register(subscriber)
    return (service, model, subscriber)
  }

  private func tripID(_ name: String) -> String { String(name.split(separator: "/").last!) }

  /// The events of each update (a `tripUpdated` and the properties after it), as summaries.
  private func updates(_ events: [TripModelEvent]) -> [[String]] {
    var result: [[String]] = []
    for event in events {
      switch event {
      case .tripUpdated: result.append([event.summary])
      case .stateChanged, .updateFailed, .refreshed: continue
      default: result[result.count - 1].append(event.summary)
      }
    }
    return result
  }

  @Test("each added property: once when it changes, not when unchanged or left out")
  func addedProperties() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: ParityScripts.properties(tripID: tripID(name))])
    let (_, model, subscriber) = try follow(engine, name)
    let events = try await subscriber.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }
    let s = ParityScripts.start
    #expect(
      updates(events) == [
        [
          "tripUpdated[tripName, vehicleID, tripType, tripStatus, numberOfPassengers, "
            + "remainingWaypoints, intermediateDestinations, intermediateDestinationIndex, "
            + "remainingRoute, remainingRouteDistance, remainingRouteTraffic, etaToNextWaypoint]",
          "tripName", "vehicleID(v1)", "tripType(EXCLUSIVE)", "tripStatus(ENROUTE_TO_PICKUP)",
          "numberOfPassengers(1)", "remainingWaypoints(3)", "intermediateDestinations(1)",
          "intermediateDestinationIndex(0)", "remainingRoute(6 points)",
          "remainingRouteDistance(500)", "remainingRouteTraffic(3)", "etaToNextWaypoint(\(s + 300))",
        ],
        // The same answer, then the partial one: nothing. Then the reassignment alone.
        ["tripUpdated[vehicleID]", "vehicleID(v2)"],
        [
          "tripUpdated[tripType, numberOfPassengers]", "tripType(SHARED)",
          "numberOfPassengers(2)",
        ],
        // New traffic on the second leg: the waypoints and the remaining route's traffic.
        [
          "tripUpdated[remainingWaypoints, remainingRouteTraffic]", "remainingWaypoints(3)",
          "remainingRouteTraffic(3)",
        ],
        [
          "tripUpdated[tripStatus, remainingWaypoints, remainingRoute, remainingRouteDistance, "
            + "remainingRouteTraffic]",
          "tripStatus(COMPLETE)", "remainingWaypoints(0)", "remainingRoute(0 points)",
          "remainingRouteDistance(nil)", "remainingRouteTraffic(0)",
        ],
      ])
    // The values themselves: the remaining route is the paths beyond the first waypoint, its
    // traffic indexed into it.
    let first = try #require(
      events.first { if case .remainingRoute = $0 { return true } else { return false } })
    guard case .remainingRoute(let points) = first else { return }
    #expect(points.map(\.latitude) == [52.502, 52.503, 52.504, 52.504, 52.505, 52.506])
    let jams = events.compactMap { event -> [Int32]? in
      guard case .remainingRouteTraffic(let intervals) = event, !intervals.isEmpty else {
        return nil
      }
      return intervals.map { $0.startPolylinePointIndex * 10 + Int32($0.speed.rawValue) }
    }
    // SLOW is 2, TRAFFIC_JAM 3, NORMAL 1 (start index × 10 + speed).
    #expect(jams == [[2, 11, 31], [3, 11, 31]])
    // The server was sent back the versions it gave, and answered all seven polls.
    let requests = try await engine.waitForRequests(7, for: name)
    #expect(requests[2].remainingWaypointsRouteVersion == "\(ParityScripts.start + 10).000000000")
    #expect(requests[6].remainingWaypointsRouteVersion == "\(ParityScripts.start + 20).000000000")
    #expect(model.currentTrip?.vehicleID == "v2")
  }

  @Test("a trip through two intermediate destinations: index 0, then 1; the remaining route shrinks")
  func threeStops() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: ParityScripts.threeStops(tripID: tripID(name))])
    let (_, _, subscriber) = try follow(engine, name)
    let events = try await subscriber.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }
    let summaries = events.map(\.summary)
    #expect(
      summaries.filter { $0.hasPrefix("intermediateDestinationIndex") } == [
        "intermediateDestinationIndex(0)", "intermediateDestinationIndex(1)",
      ])
    #expect(
      summaries.filter { $0.hasPrefix("tripStatus") } == [
        "tripStatus(ENROUTE_TO_PICKUP)", "tripStatus(ENROUTE_TO_INTERMEDIATE_DESTINATION)",
        "tripStatus(ARRIVED_AT_INTERMEDIATE_DESTINATION)",
        "tripStatus(ENROUTE_TO_INTERMEDIATE_DESTINATION)", "tripStatus(ENROUTE_TO_DROPOFF)",
        "tripStatus(COMPLETE)",
      ])
    #expect(
      summaries.filter { $0.hasPrefix("remainingRouteDistance") } == [
        "remainingRouteDistance(900)", "remainingRouteDistance(700)",
        "remainingRouteDistance(400)", "remainingRouteDistance(0)", "remainingRouteDistance(nil)",
      ])
    #expect(
      summaries.filter { $0.hasPrefix("remainingRoute(") } == [
        "remainingRoute(6 points)", "remainingRoute(4 points)", "remainingRoute(2 points)",
        "remainingRoute(0 points)",
      ])
    // Waiting at the first destination changed the status only.
    let arrived = try #require(
      summaries.firstIndex(of: "tripStatus(ARRIVED_AT_INTERMEDIATE_DESTINATION)"))
    #expect(summaries[arrived - 1] == "tripUpdated[tripStatus]")
  }

  @Test("a shared vehicle: other riders' stops are hidden by default, shown when asked")
  func sharedTrip() async throws {
    let engine = try SharedFakeEngine.engine()
    let hidden = FakeScript.tripName()
    let shown = FakeScript.tripName()
    try engine.add([
      hidden: ParityScripts.shared(tripID: tripID(hidden), otherID: "other-rider"),
      shown: ParityScripts.shared(tripID: tripID(shown), otherID: "other-rider"),
    ])
    let (_, privateModel, privateView) = try follow(engine, hidden)
    let (_, _, fullView) = try follow(engine, shown) { $0.hidesOtherTrips = false }
    let seen = try await privateView.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }
    let all = try await fullView.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }
    let own = ParityScripts.ownPickupETA
    let other = ParityScripts.otherPickupETA

    // Private: this rider's two stops, its own pickup ETA, the route beyond its pickup; the
    // other rider boarding changes nothing this rider can see.
    #expect(
      updates(seen) == [
        [
          "tripUpdated[tripName, vehicleID, tripType, tripStatus, numberOfPassengers, "
            + "remainingWaypoints, remainingRoute, remainingRouteDistance, "
            + "remainingRouteTraffic, etaToNextWaypoint]",
          "tripName", "vehicleID(shared-v)", "tripType(SHARED)", "tripStatus(ENROUTE_TO_PICKUP)",
          "numberOfPassengers(1)", "remainingWaypoints(2)", "remainingRoute(3 points)",
          "remainingRouteDistance(400)", "remainingRouteTraffic(1)", "etaToNextWaypoint(\(own))",
        ],
        [
          "tripUpdated[tripStatus, remainingWaypoints, remainingRoute, remainingRouteDistance, "
            + "remainingRouteTraffic]",
          "tripStatus(COMPLETE)", "remainingWaypoints(0)", "remainingRoute(0 points)",
          "remainingRouteDistance(nil)", "remainingRouteTraffic(0)",
        ],
      ])
    for event in seen {
      if case .tripUpdated(let trip, _) = event {
        #expect(trip.remainingWaypoints.allSatisfy { $0.tripID != "other-rider" })
        #expect(trip.vehicleWaypoints.allSatisfy { $0.tripID != "other-rider" })
      }
    }
    // The time to this rider's pickup as the server counted it: 340 s both times.
    #expect(privateModel.currentTrip?.remainingTimeToFirstWaypoint?.seconds == 340)

    // Shown: every stop of the vehicle, and the vehicle's next-stop ETA.
    let fullUpdates = updates(all)
    #expect(fullUpdates.count == 3)
    #expect(
      fullUpdates.first?.filter { !$0.hasPrefix("tripUpdated") } == [
        "tripName", "vehicleID(shared-v)", "tripType(SHARED)", "tripStatus(ENROUTE_TO_PICKUP)",
        "numberOfPassengers(1)", "remainingWaypoints(4)", "remainingRoute(9 points)",
        "remainingRouteDistance(900)", "remainingRouteTraffic(4)", "etaToNextWaypoint(\(other))",
      ])
    #expect(
      fullUpdates.dropFirst().first == [
        "tripUpdated[remainingWaypoints, remainingRoute, remainingRouteDistance, "
          + "remainingRouteTraffic, etaToNextWaypoint]",
        "remainingWaypoints(3)", "remainingRoute(6 points)", "remainingRouteDistance(700)",
        "remainingRouteTraffic(2)", "etaToNextWaypoint(\(own))",
      ])
  }

  @Test("a new interval for one model takes effect on its next poll; nil goes back")
  func perModelInterval() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: [.trip(["tripStatus": "NEW"])]])  // repeats: never ends
    let (service, model, subscriber) = try follow(engine, name, pollInterval: .seconds(30))
    try await subscriber.wait("NEW") { $0.contains(.tripStatus(.new)) }
    #expect(model.options.pollInterval == nil)
    // The next poll would be 30 s away: 200 ms brings it forward, and keeps them coming.
    let changed = ContinuousClock.now
    model.options = try TripModelOptions(pollInterval: .milliseconds(200))
    #expect(model.options.pollInterval == .milliseconds(200))
    _ = try await engine.waitForRequests(5, for: name, timeout: .seconds(5))
    #expect(ContinuousClock.now - changed < .seconds(5))
    // Back to the service's 30 s: the poll waiting now is moved 30 s past the last one.
    model.options = TripModelOptions()
    let settled = engine.requests(for: name).count
    // One poll may have been in flight when the interval went back.
    let stable = try await engine.waitForRequests(settled, for: name)
    try await Task.sleep(for: .seconds(1))
    #expect(engine.requests(for: name).count <= stable.count + 1)
    // An interval under the service's floor is refused when the options are made.
    #expect(throws: TripService.ConfigurationError.self) {
      try TripModelOptions(pollInterval: .milliseconds(10))
    }
    service.shutdown()
  }

  @Test("refresh() polls at once; during a poll it sends nothing more")
  func refresh() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let slow = FakeScript.Step.trip(["tripStatus": "ENROUTE_TO_PICKUP"]).delayed(1000)
    try engine.add([name: [.trip(["tripStatus": "NEW"]), slow, .trip(["tripStatus": "NEW"])]])
    let subscriber = RecordingSubscriber(receivesRefreshes: true)
    let (service, model, _) = try follow(
      engine, name, subscriber: subscriber, pollInterval: .seconds(30))
    try await subscriber.wait("NEW") { $0.contains(.tripStatus(.new)) }
    #expect(try await engine.waitForRequests(1, for: name).count == 1)
    // Idle for 30 s otherwise: refresh polls now. That poll takes a second to answer, and
    // refreshing all the while sends nothing more.
    let refreshed = ContinuousClock.now
    model.refresh()
    while !subscriber.events.contains(.tripStatus(.enrouteToPickup)),
      ContinuousClock.now - refreshed < .seconds(10)
    {
      model.refresh()
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(subscriber.events.contains(.tripStatus(.enrouteToPickup)))
    let requests = try await engine.waitForRequests(2, for: name)
    #expect(requests.count == 2, "one call for all the refreshes during it: \(requests)")
    #expect(requests[1].answer == "OK")
    #expect(ContinuousClock.now - refreshed < .seconds(5))
    service.shutdown()
  }

  @Test("liveness: refreshed after every good poll for those who ask; lastRefreshed; completion")
  func liveness() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let same = FakeScript.Step.trip(["tripStatus": "ENROUTE_TO_PICKUP"])
    try engine.add([name: [same, same, same, .trip(["tripStatus": "COMPLETE"])]])
    let service = try FleetTest.service(engine)
    let model = try service.tripModel(forTripName: name)
    #expect(model.lastRefreshed == nil)
    // Not following yet: nothing to wait for.
    await #expect(throws: RPCError.self) { _ = try await model.completion }
    let listening = RecordingSubscriber(receivesRefreshes: true)
    let quiet = RecordingSubscriber()
    model.register(listening)
    model.register(quiet)
    let final = try await model.completion
    #expect(final.tripStatus == .complete)
    // Already over: at once, the same trip.
    #expect(try await model.completion == final)
    let heard = try await listening.wait("the end") { $0.contains(.stateChanged(.inactive)) }
    #expect(
      heard.map(\.summary) == [
        "state(active)", "tripUpdated[tripName, tripStatus]", "tripName",
        "tripStatus(ENROUTE_TO_PICKUP)", "refreshed", "refreshed", "refreshed",
        "tripUpdated[tripStatus]", "tripStatus(COMPLETE)", "refreshed", "state(inactive)",
      ])
    #expect(!quiet.events.contains { $0.summary == "refreshed" })
    let times = heard.compactMap { event -> Date? in
      if case .refreshed(let date) = event { return date }
      return nil
    }
    #expect(times == times.sorted())
    #expect(model.lastRefreshed == times.last)
  }

  @Test("completion throws CANCELLED when following stops before the end")
  func completionCancelled() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: [.trip(["tripStatus": "NEW"])]])
    let service = try FleetTest.service(engine)
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    try await subscriber.wait("NEW") { $0.contains(.tripStatus(.new)) }
    let ending = Task { () async throws(RPCError) -> FleetEngine.Trip in try await model.completion }
    // Once it waits, the last subscriber leaves.
    let deadline = ContinuousClock.now + .seconds(10)
    while model.protected.withLock({ $0.completionWaiters.isEmpty }), ContinuousClock.now < deadline {
      await Task.yield()
    }
    model.unregisterSubscriber(subscriber)
    let result = await ending.result
    #expect(throws: RPCError.self) { _ = try result.get() }
    if case .failure(let error) = result { #expect((error as? RPCError)?.code == .cancelled) }
  }

  @Test("the service lists its models, the active ones, and answers hasTripModel")
  func listsModels() async throws {
    let engine = try SharedFakeEngine.engine()
    let following = FakeScript.tripName()
    let idle = FakeScript.tripName()
    try engine.add([following: [.trip(["tripStatus": "NEW"])]])
    let service = try FleetTest.service(engine)
    let active = try service.tripModel(forTripName: following)
    let inactive = try service.tripModel(forTripName: idle)
    let subscriber = RecordingSubscriber()
    active.register(subscriber)
    #expect(Set(service.tripModels.map(\.tripName)) == [active.tripName, inactive.tripName])
    #expect(service.activeTripModels.map(\.tripName) == [active.tripName])
    #expect(service.hasTripModel(forTripName: following))
    #expect(!service.hasTripModel(forTripName: FakeScript.tripName()))
    #expect(!service.hasTripModel(forTripName: "providers/x/trip/y"))
    service.shutdown()
  }
}
