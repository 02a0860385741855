import FleetProtos
import Testing

/// The one rule for trip names, shared by the client and the simulator: Fleet Engine's rule
/// for trip IDs (`CreateTripRequest.trip_id`), and non-empty provider IDs without "/",
/// whitespace or control characters.
@Suite("The trip name rule")
struct TripNameRuleTests {
  static let longestID = String(repeating: "x", count: 64)
  // "é" as one scalar (NFC) and as "e" + U+0301 COMBINING ACUTE ACCENT (NFD).
  static let composed = "caf\u{E9}"
  static let decomposed = "cafe\u{301}"

  @Test(
    "trip IDs Fleet Engine allows are valid",
    arguments: [
      "t", "trip-42", "TRIP_42.a~b", "ünïcödé", composed, "a b", "a;b=c&d", "a\tb", "😀",
      longestID, String(repeating: "é", count: 64), String(repeating: "😀", count: 64),
    ])
  func validTripID(_ id: String) throws {
    #expect(TripName.problem(withTripID: id) == nil)
    let name = try TripName(parsing: "providers/p/trips/\(id)")
    #expect(name.providerID == "p")
    #expect(name.tripID == id)
    #expect(name.description == "providers/p/trips/\(id)")
    #expect(name.parent == "providers/p")
    #expect(try TripName(checkingProviderID: "p", tripID: id) == name)
    #expect(try TripName(parent: "providers/p", tripID: id) == name)
  }

  @Test(
    "trip IDs Fleet Engine refuses are invalid, saying why",
    arguments: [
      ("", "is empty"),
      ("a:b", "contains \":\""),
      ("a?b", "contains \"?\""),
      ("a,b", "contains \",\""),
      ("a#b", "contains \"#\""),
      ("a/b", "contains \"/\""),
      (longestID + "x", "is longer than 64 characters"),
      (String(repeating: "é", count: 65), "is longer than 64 characters"),
      (decomposed, "is not in Unicode Normalization Form C"),
      ("\u{212B}", "is not in Unicode Normalization Form C"),  // ANGSTROM SIGN: NFC is U+00C5
      ("a\u{0}b", "contains U+0000"),
    ])
  func invalidTripID(_ id: String, _ problem: String) throws {
    #expect(TripName.problem(withTripID: id)?.contains(problem) == true, "\(id.debugDescription)")
    let invalid = try #require(throws: TripName.Invalid.self) {
      try TripName(checkingProviderID: "p", tripID: id)
    }
    #expect(invalid.part == .tripID)
    #expect(invalid.message.contains("trip ID \"\(id)\""), "\(invalid.message)")
    #expect(invalid.message.contains(problem), "\(invalid.message)")
    let viaParent = try #require(throws: TripName.Invalid.self) {
      try TripName(parent: "providers/p", tripID: id)
    }
    #expect(viaParent.part == .tripID)
  }

  @Test("a trip ID in a name is checked by the same rule, the message quoting the name")
  func tripIDInName() throws {
    for id in ["a:b", Self.longestID + "x", Self.decomposed, ""] {
      let name = "providers/p/trips/\(id)"
      let invalid = try #require(throws: TripName.Invalid.self) { try TripName(parsing: name) }
      #expect(invalid.part == .tripID, "\(name)")
      #expect(invalid.message.contains("in trip name \"\(name)\""), "\(invalid.message)")
    }
  }

  @Test(
    "provider IDs must be non-empty, without \"/\", whitespace or control characters",
    arguments: [
      ("", "is empty"), ("p q", "whitespace"), ("p\n", "control"), ("p\u{7F}", "control"),
      ("\u{A0}p", "whitespace"),
    ])
  func invalidProviderID(_ id: String, _ problem: String) throws {
    #expect(TripName.problem(withProviderID: id)?.contains(problem) == true)
    let invalid = try #require(throws: TripName.Invalid.self) {
      try TripName(checkingProviderID: id, tripID: "t")
    }
    #expect(invalid.part == .providerID)
    #expect(invalid.message.contains("provider ID \"\(id)\""), "\(invalid.message)")
  }

  @Test(
    "provider IDs may be any other text", arguments: ["p", "my-project", "sim_provider.1", "ü"])
  func validProviderID(_ id: String) throws {
    #expect(TripName.problem(withProviderID: id) == nil)
    #expect(try TripName(parsing: "providers/\(id)/trips/t").providerID == id)
  }

  @Test(
    "names not shaped providers/{provider_id}/trips/{trip_id} are invalid as names",
    arguments: [
      "", "trips/t", "providers/p", "providers/p/trips", "providers/p/trip/t",
      "Providers/p/trips/t",
      "projects/p/trips/t", "providers/p/vehicles/t",
    ])
  func malformedName(_ name: String) throws {
    let invalid = try #require(throws: TripName.Invalid.self) { try TripName(parsing: name) }
    #expect(invalid.part == .name)
    #expect(
      invalid.message == "trip name \"\(name)\" is not providers/{provider_id}/trips/{trip_id}")
  }

  @Test("a \"/\" in an ID makes the name too long, and the message says so")
  func slashInID() throws {
    for name in ["providers/p/trips/a/b", "providers/p/trips/a/b/c/d"] {
      let invalid = try #require(throws: TripName.Invalid.self) { try TripName(parsing: name) }
      #expect(invalid.part == .name)
      #expect(invalid.message.hasSuffix("(an ID may not contain \"/\")"), "\(invalid.message)")
    }
    // In the provider's place, "/" leaves a name of the wrong shape.
    #expect(throws: TripName.Invalid.self) { try TripName(parsing: "providers/p/q/trips/t") }
    #expect(throws: TripName.Invalid.self) { try TripName(checkingProviderID: "p/q", tripID: "t") }
  }

  @Test("parents are providers/{provider_id}, with a valid provider ID")
  func parents() throws {
    #expect(try TripName.providerID(parsingParent: "providers/my-project") == "my-project")
    for parent in ["", "providers", "providers/p/trips", "projects/p", "providers/p/"] {
      let invalid = try #require(throws: TripName.Invalid.self) {
        try TripName.providerID(parsingParent: parent)
      }
      #expect(invalid.part == .parent, "\(parent)")
    }
    for parent in ["providers/", "providers/p q"] {
      let invalid = try #require(throws: TripName.Invalid.self) {
        try TripName(parent: parent, tripID: "t")
      }
      #expect(invalid.part == .providerID, "\(parent)")
      #expect(invalid.message.contains("in parent \"\(parent)\""), "\(invalid.message)")
    }
  }
}
