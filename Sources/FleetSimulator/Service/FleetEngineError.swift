internal import FleetProtos
internal import GRPCWire

/// The errors the simulator answers with, shaped as Fleet Engine's: a status code, a message
/// a person can act on, and a `google.rpc.ErrorInfo` in Fleet Engine's domain (plus a
/// `BadRequest` for invalid arguments), sent as `grpc-status-details-bin`.
enum FleetEngineError {
  /// The `ErrorInfo.domain` of every error.
  static let domain = "fleetengine.googleapis.com"

  /// An error with an `ErrorInfo` of `reason` and `metadata`, followed by `more` details.
  static func make(
    _ code: StatusCode, _ message: String, reason: String, metadata: [String: String] = [:],
    more: [ErrorDetail] = []
  ) -> RPCError {
    var info = GoogleRPC.ErrorInfo()
    info.reason = reason
    info.domain = domain
    info.metadata = metadata
    var error = RPCError(code: code, message: message)
    error.details = [.errorInfo(info)] + more
    return error
  }

  /// INVALID_ARGUMENT about request field `field`.
  static func invalidArgument(field: String, _ message: String) -> RPCError {
    var violation = GoogleRPC.BadRequest.FieldViolation()
    violation.field = field
    violation.description = message
    var badRequest = GoogleRPC.BadRequest()
    badRequest.fieldViolations = [violation]
    return make(
      .invalidArgument, message, reason: "INVALID_ARGUMENT", metadata: ["field": field],
      more: [.badRequest(badRequest)])
  }

  /// NOT_FOUND for trip `name`.
  static func tripNotFound(_ name: String) -> RPCError {
    make(
      .notFound, "trip \(name) does not exist (check the trip ID and that it was created)",
      reason: "TRIP_NOT_FOUND", metadata: ["trip": name])
  }

  /// UNAUTHENTICATED: no usable token.
  static func unauthenticated(_ message: String, reason: String) -> RPCError {
    make(.unauthenticated, message, reason: reason)
  }

  /// PERMISSION_DENIED: a valid token that does not cover the trip.
  static func permissionDenied(_ message: String, tripID: String?) -> RPCError {
    make(
      .permissionDenied, message, reason: "TOKEN_TRIP_MISMATCH",
      metadata: tripID.map { ["trip_id": $0] } ?? [:])
  }
}
