/// Which bearer tokens the simulator accepts.
///
/// Every call must carry `authorization: Bearer <token>`; one without it is answered
/// UNAUTHENTICATED whatever the policy. Errors carry a `google.rpc.ErrorInfo` in the domain
/// `fleetengine.googleapis.com`.
public enum TokenPolicy: Sendable, Hashable {
  /// Any non-empty token is accepted.
  case anyBearerToken
  /// A token must name the trip the call is about, as Fleet Engine's consumer tokens do.
  ///
  /// Two forms are understood (see ``SimulatorToken``):
  /// - `sim:<trip_id>`, or `sim:*` for every trip (what a provider's server would hold);
  /// - a JWT-like `header.payload.signature` whose base64url JSON payload has Fleet Engine's
  ///   claim `"authorization": {"tripid": "<trip_id>"}` (or `"*"`) and optionally `"exp"`
  ///   (seconds since 1970). The signature is not checked.
  ///
  /// A token that is neither, or has expired, is UNAUTHENTICATED; a valid token for another
  /// trip is PERMISSION_DENIED. SearchTrips needs a token for every trip (`*`); CreateTrip
  /// one for the trip being created or `*`.
  case perTrip
}
