internal import FleetProtos
internal import GRPCWire

// The rule for trip names is FleetProtos' TripName, the client's too, so the simulator takes
// exactly the names a client may send. Here is what it answers when a request breaks the rule:
// INVALID_ARGUMENT with a BadRequest naming the request's field, as Fleet Engine does.
extension TripName {
  /// The trip name in request field `field`, parsed.
  init(requestName name: String, field: String = "name") throws(RPCError) {
    do {
      try self.init(parsing: name)
    } catch {
      throw FleetEngineError.invalidArgument(field: field, error.message)
    }
  }

  /// Trip `tripID` (request field `trip_id`) under request field `parent`.
  init(requestParent parent: String, tripID: String) throws(RPCError) {
    do {
      try self.init(parent: parent, tripID: tripID)
    } catch {
      throw FleetEngineError.invalidArgument(field: Self.field(of: error), error.message)
    }
  }

  /// The provider ID of request field `parent`, `providers/{provider_id}`.
  static func providerID(requestParent parent: String) throws(RPCError) -> String {
    do {
      return try providerID(parsingParent: parent)
    } catch {
      throw FleetEngineError.invalidArgument(field: "parent", error.message)
    }
  }

  /// The request field a CreateTrip-style request's problem is in.
  private static func field(of invalid: Invalid) -> String {
    switch invalid.part {
    case .tripID: "trip_id"
    case .name, .parent, .providerID: "parent"
    }
  }
}
