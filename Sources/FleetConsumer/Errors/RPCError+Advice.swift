// Public: a public conformance to Foundation's LocalizedError needs Foundation in the interface.
public import Foundation
public import GRPCWire

// GRPCWire bridges RPCError to NSError (domain io.grpc, the wire number) for any gRPC user;
// the advice a trip follower gets with it is this package's: GRPCWire puts the recovery
// suggestion of this conformance into the NSError's user info.
extension RPCError: LocalizedError {
  /// ``description``, for `localizedDescription`.
  public var errorDescription: String? { description }

  /// The code's ``StatusCode/explanation``: what it means for someone following trips.
  public var recoverySuggestion: String? { code.explanation }
}
