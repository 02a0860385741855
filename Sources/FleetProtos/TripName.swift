/// A Fleet Engine trip's resource name, `providers/{provider_id}/trips/{trip_id}`, checked by
/// the one rule the whole package uses: a client refuses before sending exactly the names the
/// simulator would refuse.
///
/// - Trip IDs follow Fleet Engine's rule for `CreateTripRequest.trip_id`: 1 to 64 characters
///   (Unicode scalars), in Unicode Normalization Form C, none of `/ : ? , #`. And no U+0000:
///   protobuf-c cuts a string there (CodeGen/README.md), so such an ID would name another trip
///   on the wire.
/// - Provider IDs (the Google Cloud project ID of the provider's service account) must be
///   non-empty, with no `/` (it would name another resource), whitespace or control character
///   (the ID travels in the `x-goog-request-params` header).
///
/// Anything else throws ``Invalid``, naming the part and what is wrong with it. FleetConsumer's
/// `TripName(_:)` and `TripName(providerID:tripID:)` turn that into INVALID_ARGUMENT; the
/// simulator answers it as Fleet Engine does, with a `BadRequest` naming the request field.
public struct TripName: Sendable, Hashable, CustomStringConvertible {
  /// The provider's ID: the Google Cloud project ID of its service account.
  public let providerID: String
  /// The trip's ID within the provider; the token provider is given it.
  public let tripID: String

  /// `providers/{providerID}/trips/{tripID}`.
  public var description: String { "providers/\(providerID)/trips/\(tripID)" }

  /// `providers/{providerID}`: the parent of the provider's trips.
  public var parent: String { "providers/\(providerID)" }

  /// Why a name, a parent or an ID is not a valid one.
  public struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong: the name's shape, the parent's shape, or one of the IDs.
    public enum Part: Hashable, Sendable {
      case name, parent, providerID, tripID
    }

    public var part: Part
    /// What is wrong, for a person; quotes the offending text.
    public var message: String

    public init(_ part: Part, _ message: String) {
      self.part = part
      self.message = message
    }

    public var description: String { message }
  }

  /// Parses `name`, a trip's full resource name.
  public init(parsing name: String) throws(Invalid) {
    // Split on bytes ("/" is ASCII): a simulator checks the name of every GetTrip.
    let parts = name.utf8.split(
      separator: UInt8(ascii: "/"), maxSplits: 4, omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0].elementsEqual("providers".utf8),
      parts[2].elementsEqual("trips".utf8)
    else {
      throw Invalid(
        .name,
        "trip name \"\(name)\" is not providers/{provider_id}/trips/{trip_id}"
          + (parts.count > 4 ? " (an ID may not contain \"/\")" : ""))
    }
    try self.init(
      checkingProviderID: String(Substring(parts[1])), tripID: String(Substring(parts[3])),
      in: " in trip name \"\(name)\"")
  }

  /// The name of trip `tripID` of provider `providerID`, both checked.
  public init(checkingProviderID providerID: String, tripID: String) throws(Invalid) {
    try self.init(checkingProviderID: providerID, tripID: tripID, in: "")
  }

  /// The name of trip `tripID` under `parent` (`providers/{provider_id}`), both checked.
  public init(parent: String, tripID: String) throws(Invalid) {
    try self.init(
      checkingProviderID: try Self.providerID(parsingParent: parent), tripID: tripID, in: "")
  }

  /// The provider ID of `parent`, which must be `providers/{provider_id}` with a valid ID.
  public static func providerID(parsingParent parent: String) throws(Invalid) -> String {
    let parts = parent.utf8.split(
      separator: UInt8(ascii: "/"), maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0].elementsEqual("providers".utf8) else {
      throw Invalid(.parent, "parent \"\(parent)\" is not providers/{provider_id}")
    }
    let providerID = String(Substring(parts[1]))
    if let problem = problem(withProviderID: providerID) {
      throw Invalid(.providerID, "provider ID \"\(providerID)\" in parent \"\(parent)\" \(problem)")
    }
    return providerID
  }

  /// What is wrong with `id` as a trip ID, or nil when Fleet Engine takes it.
  public static func problem(withTripID id: String) -> String? {
    if id.isEmpty { return "is empty" }
    // The common case, checked byte by byte: printable ASCII is in NFC, one scalar per byte.
    if id.utf8.count <= maxTripIDLength,
      id.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && !forbiddenInTripID.contains($0) })
    {
      return nil
    }
    let forbidden = id.unicodeScalars.first {
      $0.isASCII && forbiddenInTripID.contains(UInt8($0.value))
    }
    if let forbidden {
      return "contains \"\(forbidden)\", which Fleet Engine does not allow in a trip ID"
    }
    if id.unicodeScalars.contains("\0") {
      return "contains U+0000, at which protobuf-c would cut it"
    }
    if id.unicodeScalars.count > maxTripIDLength {
      return "is longer than \(maxTripIDLength) characters"
    }
    var utf8 = id.utf8Span
    if !utf8.checkForNFC(quickCheck: false) {
      return "is not in Unicode Normalization Form C (NFC)"
    }
    return nil
  }

  /// What is wrong with `id` as a provider ID, or nil when it is valid.
  public static func problem(withProviderID id: String) -> String? {
    if id.isEmpty { return "is empty" }
    // The common case, byte by byte: printable ASCII other than space and "/".
    if id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }) { return nil }
    for scalar in id.unicodeScalars {
      if scalar == "/" { return "contains \"/\"" }
      if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control {
        return "contains whitespace or a control character"
      }
    }
    return nil
  }

  /// Fleet Engine's longest trip ID, in characters.
  public static let maxTripIDLength = 64

  /// `/ : ? , #`: Fleet Engine refuses trip IDs with any of them.
  private static let forbiddenInTripID: [UInt8] = Array("/:?,#".utf8)

  /// `context` says where the IDs came from, for the messages (` in trip name "…"`); it is
  /// only built for an invalid one, as a simulator parses the name of every GetTrip.
  private init(
    checkingProviderID providerID: String, tripID: String, in context: @autoclosure () -> String
  ) throws(Invalid) {
    if let problem = Self.problem(withProviderID: providerID) {
      throw Invalid(.providerID, "provider ID \"\(providerID)\"\(context()) \(problem)")
    }
    if let problem = Self.problem(withTripID: tripID) {
      throw Invalid(.tripID, "trip ID \"\(tripID)\"\(context()) \(problem)")
    }
    self.providerID = providerID
    self.tripID = tripID
  }
}
