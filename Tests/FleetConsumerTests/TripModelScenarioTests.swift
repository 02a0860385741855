import FleetConsumer
import Foundation
import Testing

/// The issue's scenarios through the Swift API, against the fake Fleet Engine (grpcio with
/// Google's message classes), which records every request that reaches it.
@Suite("Following trips through the Swift API", .fakeFleetEngine)
struct TripModelScenarioTests {
  @Test("a full lifecycle: every property callback in order, versions sent back, then stop")
  func fullLifecycle() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let tripID = String(name.split(separator: "/").last!)
    try engine.add([name: Lifecycle.steps(tripID: tripID)])
    // A concurrent queue: per-model ordering must not depend on a serial executor.
    let service = try FleetTest.service(engine) {
      $0.callbackExecutor = .dispatchQueue(DispatchQueue.global())
    }
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    #expect(model.state == .active)

    let events = try await subscriber.wait("the trip to end") {
      $0.contains(.stateChanged(.inactive))
    }
    #expect(events.map(\.summary) == Lifecycle.expectedSummaries)
    #expect(subscriber.overlaps == 0)
    #expect(model.state == .inactive)
    #expect(model.currentTrip?.tripStatus == .complete)
    // Left out of the last responses, kept from earlier ones.
    #expect(model.currentTrip?.route.count == 4)
    #expect(model.currentTrip?.remainingDistanceMeters == 3000)

    await model.loopEnded()
    let requests = try await engine.waitForRequests(6, for: name)
    #expect(requests.count == 6, "no GetTrip after COMPLETE: \(requests)")
    for request in requests {
      #expect(request.authorization == "Bearer test-token")
      #expect(request.requestParams == "provider_id=providers/\(FleetTest.provider)")
      #expect(request.view == "JOURNEY_SHARING_V1S")
      #expect(request.routeFormat == "LAT_LNG_LIST_TYPE")
      #expect(request.regionCode == "US")
      #expect(request.sdkType == "CONSUMER")
    }
    #expect(requests[0].currentRouteSegmentVersion == nil)
    #expect(requests[2].currentRouteSegmentVersion == "\(Lifecycle.start + 10).000000000")
    #expect(requests[2].remainingWaypointsVersion == "\(Lifecycle.start + 10).000000000")
    #expect(requests[5].currentRouteSegmentVersion == "\(Lifecycle.start + 300).000000000")
  }

  @Test("the updates sequence yields the same events and ends after the terminal status")
  func updatesSequence() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: Lifecycle.steps(tripName: name)])
    let service = try FleetTest.service(engine)
    let model = try service.tripModel(forTripName: name)
    var summaries: [String] = []
    for await event in model.updates { summaries.append(event.summary) }
    #expect(summaries == Lifecycle.expectedSummaries)
    // Iterated again after the end: it ends at once, and nothing is sent.
    for await event in model.updates { Issue.record("unexpected \(event.summary)") }
    await model.loopEnded()
    #expect(try await engine.waitForRequests(6, for: name).count == 6)
  }

  @Test("UNAVAILABLE, DEADLINE_EXCEEDED (sent and local) are reported, then it recovers")
  func transientErrors() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([
      name: [
        .trip(["tripStatus": "NEW"]),
        .error("UNAVAILABLE", "the backend is restarting"),
        .error("DEADLINE_EXCEEDED", "the backend was too slow"),
        .trip(["tripStatus": "NEW"]).delayed(1500),
        .trip(["tripStatus": "ENROUTE_TO_PICKUP"]),
        .trip(["tripStatus": "COMPLETE"]),
      ]
    ])
    let service = try FleetTest.service(engine) { $0.callTimeout = .milliseconds(500) }
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    let events = try await subscriber.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }

    let errors = events.compactMap(\.error)
    #expect(errors.map(\.code) == [.unavailable, .deadlineExceeded, .deadlineExceeded])
    #expect(errors.allSatisfy { $0.category == .serverOrNetwork })
    #expect(errors[0].message == "the backend is restarting")
    #expect(errors[1].message == "the backend was too slow")
    let nsError = errors[0] as NSError
    #expect(nsError.domain == "io.grpc")
    #expect(nsError.code == 14)
    #expect(
      events.map(\.summary).filter { $0.hasPrefix("tripStatus") } == [
        "tripStatus(NEW)", "tripStatus(ENROUTE_TO_PICKUP)", "tripStatus(COMPLETE)",
      ])
  }

  @Test("a stale token answered UNAUTHENTICATED: dropped, exactly one new fetch, then success")
  func staleToken() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add(
      [
        name: [
          .trip(["tripStatus": "NEW"]), .trip(["tripStatus": "NEW"]),
          .trip(["tripStatus": "COMPLETE"]),
        ]
      ],
      requireToken: "fresh")
    let tokens = CountingTokenProvider("stale", "fresh")
    let service = try FleetTest.service(engine, tokens: tokens)
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    let events = try await subscriber.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }

    #expect(events.compactMap(\.error).map(\.code) == [.unauthenticated])
    #expect(events.compactMap(\.error).first?.category == .client)
    #expect(tokens.callCount == 2, "one fetch, one refetch after UNAUTHENTICATED, then reuse")
    let requests = try await engine.waitForRequests(4, for: name)
    #expect(
      requests.map(\.authorization) == [
        "Bearer stale", "Bearer fresh", "Bearer fresh", "Bearer fresh",
      ])
    #expect(requests.map(\.answer) == ["UNAUTHENTICATED", "OK", "OK", "OK"])
  }

  @Test("PERMISSION_DENIED for a while: each reported, polling goes on, then success")
  func permissionDenied() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let denied = FakeScript.Step.error("PERMISSION_DENIED", "the token is for another trip")
    try engine.add([
      name: [
        denied, denied, denied, .trip(["tripStatus": "NEW"]), .trip(["tripStatus": "COMPLETE"]),
      ]
    ])
    let service = try FleetTest.service(engine)
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    let events = try await subscriber.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }

    let errors = events.compactMap(\.error)
    #expect(errors.count == 3)
    #expect(errors.allSatisfy { $0.code == .permissionDenied && $0.category == .client })
    #expect(errors.allSatisfy { $0.message == "the token is for another trip" })
    #expect(events.map(\.summary).contains("tripStatus(NEW)"))
    #expect(
      try await engine.waitForRequests(4, for: name).map(\.answer).prefix(4) == [
        "PERMISSION_DENIED", "PERMISSION_DENIED", "PERMISSION_DENIED", "OK",
      ])
  }

  @Test("NOT_FOUND is reported on every poll and polling goes on until unsubscribed")
  func notFound() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName("missing")  // no script: the server says NOT_FOUND
    let service = try FleetTest.service(engine)
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    let events = try await subscriber.wait("three failures") { $0.compactMap(\.error).count >= 3 }
    for error in events.compactMap(\.error) {
      #expect(error.code == .notFound)
      #expect(error.category == .client)
      #expect(error.message == "trip \(name) not found")
      #expect((error as NSError).domain == "io.grpc")
      #expect((error as NSError).code == 5)
    }
    #expect(model.state == .active)
    model.unregisterSubscriber(subscriber)
    #expect(model.state == .inactive)
    await model.loopEnded()
    let sent = try await engine.waitForRequests(3, for: name).count
    #expect(sent >= 3)
  }

  @Test("CANCELED is delivered and ends following")
  func canceled() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([
      name: [
        .trip(["tripStatus": "NEW"]), .trip(["tripStatus": "ENROUTE_TO_PICKUP"]),
        .trip(["tripStatus": "CANCELED"]),
      ]
    ])
    let service = try FleetTest.service(engine)
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    let events = try await subscriber.wait("CANCELED") { $0.contains(.stateChanged(.inactive)) }
    #expect(
      events.map(\.summary).suffix(3) == [
        "tripUpdated[tripStatus]", "tripStatus(CANCELED)", "state(inactive)",
      ])
    await model.loopEnded()
    #expect(try await engine.waitForRequests(3, for: name).count == 3)
  }

  @Test(
    "an invalid trip name fails with INVALID_ARGUMENT and nothing reaches the server",
    arguments: [
      "providers/\(FleetTest.provider)/trips/a/b", "providers/\(FleetTest.provider)/trips/",
      "providers//trips/t", "trips/t", "providers/\(FleetTest.provider)/trip/t",
      // Fleet Engine's rule for trip IDs (TripName): no ":", at most 64 characters.
      "providers/\(FleetTest.provider)/trips/has:colon",
      "providers/\(FleetTest.provider)/trips/\(String(repeating: "x", count: 65))",
      "providers/other-project/trips/t",
      "", "/providers/\(FleetTest.provider)/trips/t",
    ])
  func invalidTripName(name: String) async throws {
    let engine = try SharedFakeEngine.engine()
    let service = try FleetTest.service(engine)
    let error = try #require(throws: RPCError.self) { try service.tripModel(forTripName: name) }
    #expect(error.code == .invalidArgument)
    #expect(error.category == .client)
    #expect((error as NSError).domain == "io.grpc")
    #expect((error as NSError).code == 3)
    #expect(!engine.server.lines.contains { $0.contains("trip=\(name) ") })
  }

  @Test("repeated identical responses produce no duplicate callbacks")
  func identicalResponses() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let same = FakeScript.Step.trip([
      "tripStatus": "ENROUTE_TO_PICKUP", "lastLocation": ["location": FakeScript.point(1, 2)],
      "remainingDistanceMeters": 500, "route": [FakeScript.point(1, 2), FakeScript.point(1, 3)],
    ])
    try engine.add([name: [same, same, same, same, .trip(["tripStatus": "COMPLETE"])]])
    let service = try FleetTest.service(engine)
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    let events = try await subscriber.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }
    #expect(
      events.map(\.summary) == [
        "state(active)",
        "tripUpdated[tripName, tripStatus, activeRouteRemainingDistance, activeRoute, "
          + "vehicleLocation]",
        "tripName", "tripStatus(ENROUTE_TO_PICKUP)", "remainingDistance(500)", "activeRoute(2 points)",
        "vehicleLocation(1.0,2.0)",
        "tripUpdated[tripStatus]", "tripStatus(COMPLETE)", "state(inactive)",
      ])
    #expect(try await engine.waitForRequests(5, for: name).count == 5)
  }

  @Test("versions are sent back and partial responses merged into the known trip")
  func versionsAndPartialResponses() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    let tripID = String(name.split(separator: "/").last!)
    let routeVersion = FakeScript.time(1_900_000_100, nanos: 250_000_000)
    let trafficVersion = FakeScript.time(1_900_000_200)
    let waypointsVersion = FakeScript.time(1_900_000_300)
    let waypointsRouteVersion = FakeScript.time(1_900_000_400)
    var pickup = Lifecycle.waypoint("PICKUP_WAYPOINT_TYPE", Lifecycle.pickup, trip: tripID)
    let bare = pickup
    pickup["pathToWaypoint"] = [FakeScript.point(52.4, 13.3), FakeScript.point(52.5, 13.4)]
    let traffic: [String: Any] = [
      "speedReadingInterval": [
        ["startPolylinePointIndex": 0, "endPolylinePointIndex": 1, "speed": "SLOW"],
        ["startPolylinePointIndex": 1, "endPolylinePointIndex": 2, "speed": "NORMAL"],
      ]
    ]
    let full: [String: Any] = [
      "tripStatus": "ENROUTE_TO_PICKUP", "lastLocation": ["location": FakeScript.point(52.4, 13.3)],
      "route": [
        FakeScript.point(52.4, 13.3), FakeScript.point(52.45, 13.35), FakeScript.point(52.5, 13.4),
      ],
      "currentRouteSegmentVersion": routeVersion,
      "currentRouteSegmentTraffic": traffic, "currentRouteSegmentTrafficVersion": trafficVersion,
      "remainingWaypoints": [pickup], "remainingWaypointsVersion": waypointsVersion,
      "remainingWaypointsRouteVersion": waypointsRouteVersion,
      "intermediateDestinations": [FakeScript.location(52.45, 13.35)],
      "intermediateDestinationsVersion": waypointsVersion,
    ]
    // What Fleet Engine sends when the versions match: the versions, none of the parts.
    let partial: [String: Any] = [
      "tripStatus": "ENROUTE_TO_PICKUP",
      "lastLocation": ["location": FakeScript.point(52.45, 13.35)],
      "currentRouteSegmentVersion": routeVersion,
      "currentRouteSegmentTrafficVersion": trafficVersion,
      "remainingWaypoints": [bare], "remainingWaypointsVersion": waypointsVersion,
      "remainingWaypointsRouteVersion": waypointsRouteVersion,
    ]
    try engine.add([
      name: [.trip(full), .trip(partial), .trip(partial), .trip(["tripStatus": "COMPLETE"])]
    ])
    let service = try FleetTest.service(engine)
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    model.register(subscriber)
    let events = try await subscriber.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }

    let requests = try await engine.waitForRequests(4, for: name)
    #expect(requests.count == 4)
    #expect(requests[0].currentRouteSegmentVersion == nil)
    #expect(requests[0].trafficVersion == nil)
    for request in requests.dropFirst() {
      #expect(request.currentRouteSegmentVersion == "1900000100.250000000")
      #expect(request.trafficVersion == "1900000200.000000000")
      #expect(request.remainingWaypointsVersion == "1900000300.000000000")
      #expect(request.remainingWaypointsRouteVersion == "1900000400.000000000")
    }
    // The partial answer changed the vehicle's position only; the identical one nothing.
    let summaries = events.map(\.summary)
    let firstUpdate = try #require(summaries.firstIndex { $0.hasPrefix("tripUpdated") })
    let secondUpdate = try #require(
      summaries[(firstUpdate + 1)...].firstIndex { $0.hasPrefix("tripUpdated") })
    #expect(
      Array(summaries[firstUpdate..<secondUpdate]) == [
        "tripUpdated[tripName, tripStatus, activeRoute, vehicleLocation, remainingWaypoints, "
          + "intermediateDestinations, intermediateDestinationIndex, activeRouteTraffic, "
          + "remainingRouteDistance]",
        "tripName", "tripStatus(ENROUTE_TO_PICKUP)", "activeRoute(3 points)",
        "vehicleLocation(52.4,13.3)", "remainingWaypoints(1)", "intermediateDestinations(1)",
        "intermediateDestinationIndex(0)", "activeRouteTraffic(2)", "remainingRouteDistance(0)",
      ])
    #expect(
      Array(summaries[secondUpdate...].prefix(2)) == [
        "tripUpdated[vehicleLocation]", "vehicleLocation(52.45,13.35)",
      ])
    let trip = try #require(model.currentTrip)
    #expect(trip.route.count == 3)
    #expect(trip.currentRouteSegmentTraffic?.speedReadingInterval.count == 2)
    #expect(trip.remainingWaypoints.first?.pathToWaypoint.count == 2)
    #expect(trip.intermediateDestinations.count == 1)
  }

  @Test("RetryInfo from the server is honoured before retrying")
  func retryInfo() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([
      name: [
        .error("RESOURCE_EXHAUSTED", "quota", retryDelayMs: 700), .trip(["tripStatus": "COMPLETE"]),
      ]
    ])
    let service = try FleetTest.service(engine)
    let model = try service.tripModel(forTripName: name)
    let subscriber = RecordingSubscriber()
    let clock = ContinuousClock()
    let started = clock.now
    model.register(subscriber)
    let events = try await subscriber.wait("COMPLETE") { $0.contains(.stateChanged(.inactive)) }
    #expect(events.compactMap(\.error).first?.retryDelay == .milliseconds(700))
    // The fast test policy alone would retry after 200 ms.
    #expect(clock.now - started >= .milliseconds(700))
  }
}
