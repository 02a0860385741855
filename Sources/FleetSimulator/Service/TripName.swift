internal import GRPCWire

/// A trip's resource name, `providers/{provider_id}/trips/{trip_id}`, checked.
///
/// Trip IDs follow Fleet Engine's rules: 1 to 64 characters, none of `/ : ? , #`. Provider
/// IDs must be non-empty and free of `/`. Anything else is INVALID_ARGUMENT naming the field.
struct TripName: Hashable, Sendable, CustomStringConvertible {
  let providerID: String
  let tripID: String

  /// The full name.
  var description: String { "providers/\(providerID)/trips/\(tripID)" }

  init(providerID: String, tripID: String) {
    self.providerID = providerID
    self.tripID = tripID
  }

  /// `/ : ? , #`, as bytes.
  private static let forbiddenInTripID: [UInt8] = Array("/:?,#".utf8)

  /// The name `name` of request field `field`.
  init(parsing name: String, field: String = "name") throws(RPCError) {
    // Split on bytes ("/" is ASCII): a Character-wise split was the largest part of a
    // GetTrip's own checks.
    let parts = name.utf8.split(
      separator: UInt8(ascii: "/"), maxSplits: 4, omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0].elementsEqual("providers".utf8),
      parts[2].elementsEqual("trips".utf8), !parts[1].isEmpty
    else {
      throw FleetEngineError.invalidArgument(
        field: field,
        "'\(name)' is not a trip name: it must be providers/{provider_id}/trips/{trip_id}")
    }
    let tripID = String(Substring(parts[3]))
    try Self.checkTripID(tripID, field: field)
    self.init(providerID: String(Substring(parts[1])), tripID: tripID)
  }

  /// The name of trip `tripID` under `parent` (`providers/{provider_id}`).
  init(parent: String, tripID: String) throws(RPCError) {
    let providerID = try Self.providerID(parsingParent: parent)
    try Self.checkTripID(tripID, field: "trip_id")
    self.init(providerID: providerID, tripID: tripID)
  }

  /// The provider ID of `parent`, which must be `providers/{provider_id}`.
  static func providerID(parsingParent parent: String) throws(RPCError) -> String {
    let parts = parent.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0] == "providers", !parts[1].isEmpty else {
      throw FleetEngineError.invalidArgument(
        field: "parent", "'\(parent)' is not a parent: it must be providers/{provider_id}")
    }
    return String(parts[1])
  }

  private static func checkTripID(_ tripID: String, field: String) throws(RPCError) {
    guard !tripID.isEmpty else {
      throw FleetEngineError.invalidArgument(field: field, "the trip ID is empty")
    }
    // Every GetTrip passes here: scan bytes, not Characters (each ASCII byte is a character,
    // and the forbidden ones are ASCII). 64 bytes or fewer are 64 characters or fewer.
    if tripID.utf8.count <= 64,
      !tripID.utf8.contains(where: { Self.forbiddenInTripID.contains($0) })
    {
      return
    }
    guard tripID.count <= 64 else {
      throw FleetEngineError.invalidArgument(
        field: field, "the trip ID '\(tripID)' is longer than 64 characters")
    }
    if let bad = tripID.first(where: { "/:?,#".contains($0) }) {
      throw FleetEngineError.invalidArgument(
        field: field, "the trip ID '\(tripID)' contains '\(bad)', which is not allowed")
    }
  }
}
