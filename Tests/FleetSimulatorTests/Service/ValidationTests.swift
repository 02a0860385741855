import FleetConsumer
import Foundation
import GRPCWire
import Testing

@testable import FleetSimulator

/// Errors as Fleet Engine gives them: codes, messages, and ErrorInfo details.
@Suite("Validation and tokens")
struct ValidationTests {
  static let domain = "fleetengine.googleapis.com"

  @Test(
    "malformed trip names are INVALID_ARGUMENT with a BadRequest naming the field",
    arguments: [
      "", "trip-1", "providers/p/trips/", "providers//trips/t", "providers/p/trips/a/b",
      "projects/p/trips/t", "providers/p/vehicles/t", "providers/p/trips/a:b",
      "providers/p/trips/" + String(repeating: "x", count: 65), "providers/p q/trips/t",
      "providers/p/trips/cafe\u{301}",
    ])
  func malformedName(_ name: String) async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      let error = await #expect(throws: RPCError.self) { try await sim.getTrip(name) }
      #expect(error?.code == .invalidArgument)
      #expect(error?.errorInfo?.domain == Self.domain)
      #expect(error?.badRequest?.fieldViolations.first?.field == "name")
    }
  }

  @Test(
    "CreateTrip takes every trip ID Fleet Engine's rule allows, as the client does",
    arguments: ["a b", "ünïcödé", "a;b=c&d", String(repeating: "x", count: 64)])
  func allowedTripIDs(_ tripID: String) async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      let created = try await sim.createTrip(tripID)
      let name = "providers/\(SimulatorHarness.provider)/trips/\(tripID)"
      #expect(created.name == name)
      #expect(try TripName(name).tripID == tripID)  // FleetConsumer's check, before it sends
      #expect(try await sim.getTrip(name).name == name)
    }
  }

  @Test(
    "CreateTrip refuses the trip IDs the client refuses, with a BadRequest naming trip_id",
    arguments: [
      "", "a:b", "a?b", "a,b", "a#b", "a/b", String(repeating: "x", count: 65), "cafe\u{301}",
    ])
  func refusedTripIDs(_ tripID: String) async throws {
    #expect(throws: RPCError.self) {
      try TripName(providerID: SimulatorHarness.provider, tripID: tripID)
    }
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      let error = await #expect(throws: RPCError.self) { try await sim.createTrip(tripID) }
      #expect(error?.code == .invalidArgument)
      #expect(error?.errorInfo?.domain == Self.domain)
      #expect(error?.badRequest?.fieldViolations.first?.field == "trip_id")
    }
  }

  @Test("an unknown trip is NOT_FOUND; a taken trip ID is ALREADY_EXISTS")
  func notFoundAndExists() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      let missing = await #expect(throws: RPCError.self) {
        try await sim.getTrip("providers/\(SimulatorHarness.provider)/trips/nope")
      }
      #expect(missing?.code == .notFound)
      #expect(missing?.errorInfo?.reason == "TRIP_NOT_FOUND")
      #expect(missing?.errorInfo?.domain == Self.domain)
      _ = try await sim.createTrip("taken")
      let taken = await #expect(throws: RPCError.self) { try await sim.createTrip("taken") }
      #expect(taken?.code == .alreadyExists)
    }
  }

  @Test("CreateTrip checks its fields")
  func createChecks() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      var far = fastTrip(intermediate: false)
      far.dropoffPoint = terminal(48.1, 11.6)  // Munich, from Berlin
      var invalidPoint = FleetEngine.Trip()
      invalidPoint.pickupPoint = terminal(91, 0)
      var shared = fastTrip()
      shared.tripType = .shared
      var negative = FleetEngine.Trip()
      negative.numberOfPassengers = -1
      for trip in [far, invalidPoint, shared, negative] {
        let error = await #expect(throws: RPCError.self) {
          try await sim.createTrip(SimulatorHarness.uniqueTripID(), trip)
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.badRequest != nil)
      }
      let noID = await #expect(throws: RPCError.self) { try await sim.createTrip("") }
      #expect(noID?.badRequest?.fieldViolations.first?.field == "trip_id")
    }
  }

  @Test("a call without a bearer token is UNAUTHENTICATED, under either policy")
  func missingToken() async throws {
    for policy in [TokenPolicy.anyBearerToken, .perTrip] {
      var options = fastOptions(timeScale: 1)
      options.tokenPolicy = policy
      try await SimulatorHarness.with(options) { sim in
        let name = try sim.simulator.createDemoTrip(providerID: SimulatorHarness.provider)
        for token: String? in [nil, ""] {
          let error = await #expect(throws: RPCError.self) {
            try await sim.getTrip(name, token: token)
          }
          #expect(error?.code == .unauthenticated)
          #expect(error?.errorInfo?.reason == "CREDENTIALS_MISSING")
          #expect(error?.errorInfo?.domain == Self.domain)
        }
        // UNAUTHENTICATED comes before the name is even looked at.
        let first = await #expect(throws: RPCError.self) {
          try await sim.getTrip("bad", token: nil)
        }
        #expect(first?.code == .unauthenticated)
      }
    }
  }

  @Test("by default any bearer token is accepted")
  func anyToken() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      let name = try sim.simulator.createDemoTrip(providerID: SimulatorHarness.provider)
      for token in ["x", "sim:other-trip", "not.a.jwt"] {
        #expect(try await sim.getTrip(name, token: token).name == name)
      }
    }
  }

  @Test(
    "per-trip tokens: another trip's is PERMISSION_DENIED, a bad or expired one UNAUTHENTICATED")
  func perTripTokens() async throws {
    var options = fastOptions(timeScale: 1)
    options.tokenPolicy = .perTrip
    try await SimulatorHarness.with(options) { sim in
      let created = try await sim.createTrip("mine", token: SimulatorToken.simple(tripID: "mine"))
      let name = created.name
      // Accepted: the trip's own tokens and the every-trip ones.
      for token in [
        SimulatorToken.simple(tripID: "mine"), SimulatorToken.simple(tripID: nil),
        SimulatorToken.jwt(tripID: "mine"), SimulatorToken.jwt(tripID: nil),
        SimulatorToken.jwt(tripID: "mine", expiresAt: Date().addingTimeInterval(600)),
      ] {
        #expect(try await sim.getTrip(name, token: token).name == name, "\(token)")
      }
      // Another trip's token: PERMISSION_DENIED with ErrorInfo, even for a trip that does not exist.
      for (token, target) in [
        (SimulatorToken.simple(tripID: "yours"), name),
        (SimulatorToken.jwt(tripID: "yours"), name),
        (
          SimulatorToken.simple(tripID: "yours"),
          "providers/\(SimulatorHarness.provider)/trips/ghost"
        ),
      ] {
        let error = await #expect(throws: RPCError.self) {
          try await sim.getTrip(target, token: token)
        }
        #expect(error?.code == .permissionDenied)
        #expect(error?.errorInfo?.reason == "TOKEN_TRIP_MISMATCH")
        #expect(error?.errorInfo?.domain == Self.domain)
        #expect(error?.category == .client)
      }
      // Expired or unreadable tokens: UNAUTHENTICATED.
      for (token, reason) in [
        (
          SimulatorToken.jwt(tripID: "mine", expiresAt: Date().addingTimeInterval(-5)),
          "ACCESS_TOKEN_EXPIRED"
        ),
        ("garbage", "ACCESS_TOKEN_INVALID"), ("a.b.c", "ACCESS_TOKEN_INVALID"),
        ("sim:", "ACCESS_TOKEN_INVALID"),
      ] {
        let error = await #expect(throws: RPCError.self) {
          try await sim.getTrip(name, token: token)
        }
        #expect(error?.code == .unauthenticated, "\(token)")
        #expect(error?.errorInfo?.reason == reason)
      }
      // CreateTrip of another trip and SearchTrips need the right scope.
      let create = await #expect(throws: RPCError.self) {
        try await sim.createTrip("other", token: SimulatorToken.simple(tripID: "mine"))
      }
      #expect(create?.code == .permissionDenied)
      var search = FleetEngine.SearchTripsRequest()
      search.parent = "providers/\(SimulatorHarness.provider)"
      search.vehicleID = created.vehicleID
      let narrow = await #expect(throws: RPCError.self) {
        try await sim.channel.unary(
          FleetEngine.TripService.searchTrips, search,
          options: SimulatorHarness.call(token: SimulatorToken.simple(tripID: "mine")))
      }
      #expect(narrow?.code == .permissionDenied)
      let found = try await sim.channel.unary(
        FleetEngine.TripService.searchTrips, search,
        options: SimulatorHarness.call(token: SimulatorToken.simple(tripID: nil)))
      #expect(found.message.trips.map(\.name) == [name])
    }
  }

  @Test("ReportBillableTrip is UNIMPLEMENTED")
  func unimplemented() async throws {
    try await SimulatorHarness.with(fastOptions(timeScale: 1)) { sim in
      var request = FleetEngine.ReportBillableTripRequest()
      request.name = "providers/p/trips/t"
      let error = await #expect(throws: RPCError.self) {
        try await sim.channel.unary(
          FleetEngine.TripService.reportBillableTrip, request, options: SimulatorHarness.call())
      }
      #expect(error?.code == .unimplemented)
    }
  }
}
