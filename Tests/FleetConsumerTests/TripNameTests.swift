import FleetConsumer
import Foundation
import Testing

@Suite("Trip names")
struct TripNameTests {
  @Test(
    "well-formed names parse into provider and trip IDs",
    arguments: [
      ("providers/my-project/trips/trip-42", "my-project", "trip-42"),
      ("providers/p/trips/t", "p", "t"),
      ("providers/p/trips/ünïcödé", "p", "ünïcödé"),
      // Fleet Engine's rule for trip IDs allows a space (the simulator creates such trips).
      ("providers/p/trips/a b", "p", "a b"),
      (
        "providers/p/trips/" + String(repeating: "x", count: 64), "p",
        String(repeating: "x", count: 64)
      ),
    ])
  func valid(name: String, provider: String, trip: String) throws {
    let parsed = try TripName(name)
    #expect(parsed.providerID == provider)
    #expect(parsed.tripID == trip)
    #expect(parsed.description == name)
    #expect(try TripName(providerID: provider, tripID: trip) == parsed)
  }

  @Test(
    "malformed names fail with INVALID_ARGUMENT naming the problem",
    arguments: [
      ("providers/p/trips/a/b", "may not contain \"/\""),
      ("providers/p/trips/", "trip ID \"\" in trip name \"providers/p/trips/\" is empty"),
      ("providers//trips/t", "provider ID \"\" in trip name \"providers//trips/t\" is empty"),
      ("trips/t", "is not providers/{provider_id}/trips/{trip_id}"),
      ("providers/p/trip/t", "is not providers/{provider_id}/trips/{trip_id}"),
      ("Providers/p/trips/t", "is not providers/{provider_id}/trips/{trip_id}"),
      ("providers/p /trips/t", "contains whitespace or a control character"),
      ("providers/p\n/trips/t", "contains whitespace or a control character"),
      // Fleet Engine's rule for trip IDs (CreateTripRequest.trip_id), as the simulator's.
      (
        "providers/p/trips/a:b",
        "trip ID \"a:b\" in trip name \"providers/p/trips/a:b\" contains \":\""
      ),
      ("providers/p/trips/a#b", "contains \"#\""),
      ("providers/p/trips/" + String(repeating: "x", count: 65), "is longer than 64 characters"),
      ("providers/p/trips/cafe\u{301}", "is not in Unicode Normalization Form C"),
      ("", "is not providers/{provider_id}/trips/{trip_id}"),
    ])
  func invalid(name: String, problem: String) throws {
    let error = try #require(throws: RPCError.self) { try TripName(name) }
    #expect(error.code == .invalidArgument)
    #expect(error.category == .client)
    #expect(error.message.contains(problem), "\(error.message)")
    let bridged = error as NSError
    #expect(bridged.domain == "io.grpc")
    #expect(bridged.code == 3)
  }

  @Test(
    "IDs are checked one by one too",
    arguments: [("p/q", "t"), ("p", "t/u"), ("", "t"), ("p", ""), ("p", "a:b"), ("p q", "t")])
  func invalidIDs(provider: String, trip: String) throws {
    #expect(throws: RPCError.self) { try TripName(providerID: provider, tripID: trip) }
  }
}
