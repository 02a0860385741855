public import FleetProtos
public import GRPCWire

// TripName and its rule are FleetProtos', shared with the simulator; a FleetConsumer user
// gets them as the rest of the API reports errors: as RPCError.
extension TripName {
  /// Parses `name`, `providers/{provider_id}/trips/{trip_id}` (the rule: ``TripName``);
  /// throws INVALID_ARGUMENT naming what is wrong with it, before anything is sent, as an
  /// ``RPCError`` (domain `io.grpc`, category `.client`).
  public init(_ name: String) throws(RPCError) {
    do {
      try self.init(parsing: name)
    } catch {
      throw RPCError(invalidTripName: error)
    }
  }

  /// The name of trip `tripID` of provider `providerID`; throws INVALID_ARGUMENT when either
  /// ID breaks the rule of ``TripName``.
  public init(providerID: String, tripID: String) throws(RPCError) {
    do {
      try self.init(checkingProviderID: providerID, tripID: tripID)
    } catch {
      throw RPCError(invalidTripName: error)
    }
  }
}

extension RPCError {
  /// INVALID_ARGUMENT carrying what is wrong with a trip name.
  init(invalidTripName invalid: TripName.Invalid) {
    self.init(code: .invalidArgument, message: invalid.message)
  }
}
