/// A Fleet Engine trip's resource name, `providers/{provider_id}/trips/{trip_id}`, checked.
///
/// Both IDs must be non-empty and contain no `/`, no whitespace and no control characters
/// (the provider ID travels in the `x-goog-request-params` header, and a trip ID with a
/// slash would name another resource). Anything else fails with INVALID_ARGUMENT before
/// anything is sent, as ``RPCError`` (domain `io.grpc`, category `.client`).
public struct TripName: Sendable, Hashable, CustomStringConvertible {
  /// The provider's ID: the Google Cloud project ID of its service account.
  public let providerID: String
  /// The trip's ID within the provider; the token provider is given it.
  public let tripID: String

  /// `providers/{providerID}/trips/{tripID}`.
  public var description: String { "providers/\(providerID)/trips/\(tripID)" }

  /// Parses `name`; throws INVALID_ARGUMENT naming what is wrong with it.
  public init(_ name: String) throws(RPCError) {
    let parts = name.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0] == "providers", parts[2] == "trips" else {
      throw Self.invalid(
        "trip name \"\(name)\" is not providers/{provider_id}/trips/{trip_id}"
          + (parts.count > 4 ? " (an ID may not contain \"/\")" : ""))
    }
    try self.init(providerID: String(parts[1]), tripID: String(parts[3]), checking: name)
  }

  /// The name of trip `tripID` of provider `providerID`; throws INVALID_ARGUMENT when an ID
  /// is empty or contains `/`, whitespace or a control character.
  public init(providerID: String, tripID: String) throws(RPCError) {
    try self.init(providerID: providerID, tripID: tripID, checking: nil)
  }

  private init(providerID: String, tripID: String, checking name: String?) throws(RPCError) {
    let context = name.map { " in trip name \"\($0)\"" } ?? ""
    if let problem = Self.problem(with: providerID) {
      throw Self.invalid("provider ID \"\(providerID)\"\(context) \(problem)")
    }
    if let problem = Self.problem(with: tripID) {
      throw Self.invalid("trip ID \"\(tripID)\"\(context) \(problem)")
    }
    self.providerID = providerID
    self.tripID = tripID
  }

  private static func problem(with id: String) -> String? {
    if id.isEmpty { return "is empty" }
    for scalar in id.unicodeScalars {
      if scalar == "/" { return "contains \"/\"" }
      if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control {
        return "contains whitespace or a control character"
      }
    }
    return nil
  }

  private static func invalid(_ message: String) -> RPCError {
    RPCError(code: .invalidArgument, message: message)
  }
}
