public import GRPCWire

extension StatusCode {
  /// What this code means for someone following Fleet Engine trips, and what to do about it,
  /// in one or two sentences.
  ///
  /// Based on the table in Fleet Engine's consumer SDK documentation ("Handle Consumer SDK
  /// errors" and the trip-monitoring errors table) where it covers the code, and on gRPC's
  /// doc/statuscodes.md and `google/rpc/code.proto` otherwise. Stable text, safe to show in
  /// logs; it never depends on what the server sent.
  public var explanation: String {
    switch self {
    case .ok:
      "The call succeeded; there is nothing to do."
    case .cancelled:
      "The call was cancelled before it finished, by this process (a cancelled task or a "
        + "follower that stopped) or by the server. Nothing to fix; retry if the result is still "
        + "needed, as the trip model does."
    case .unknown:
      "The server or a proxy failed without a usable status (or sent a status number gRPC "
        + "does not define). Retry later; if it persists, report it with the trailers and the "
        + "request ID."
    case .invalidArgument:
      "The request is invalid, most often the trip name: it must be "
        + "providers/{provider_id}/trips/{trip_id}, where provider_id is the ID of the service "
        + "provider's Cloud project. Fix the request; sending it unchanged fails again."
    case .deadlineExceeded:
      "The server did not answer before the call's deadline. Nothing to fix unless it keeps "
        + "happening; then the deadline is shorter than the server needs, so lengthen it."
    case .notFound:
      "The trip does not exist: it was never created, or the name points to another provider's "
        + "project. Check the trip ID and that the provider has created the trip."
    case .alreadyExists:
      "The entity the request tried to create already exists. A consumer only reads trips, so "
        + "this points to a bug in the caller or the server."
    case .permissionDenied:
      "The token does not allow this call: it is invalid, was minted for another trip ID or "
        + "with the wrong role (e.g. a consumer token calling UpdateTrip), or the Fleet Engine "
        + "API is not enabled for the project. Fix the token provider or the project's setup."
    case .resourceExhausted:
      "The project's quota is at zero or requests exceed the rate limit. Slow down (honour the "
        + "RetryInfo delay) or raise the quota in the Cloud console."
    case .failedPrecondition:
      "The server is not in the state the request needs. Do not retry unchanged until that "
        + "state has changed; the message says which state."
    case .aborted:
      "The server stopped sending the response, usually because of a server-side problem or a "
        + "concurrency conflict. Retry; the trip model does so by itself."
    case .outOfRange:
      "The request asked for something past the valid range. Fix the request; the message says "
        + "which value."
    case .unimplemented:
      "The server does not implement this method: usually the wrong endpoint or API version, or "
        + "a proxy that answered HTTP 404. Check the endpoint."
    case .internalError:
      "An invariant broke in the server or in this client, such as a malformed, truncated or "
        + "oversized response. Retrying may not help; report it with the message and request ID."
    case .unavailable:
      "The service cannot be reached now: the server is down or overloaded, or the network "
        + "failed (including a connection interrupted mid-call). Retry with backoff; the trip "
        + "model does so by itself."
    case .dataLoss:
      "Data was lost or corrupted. Retrying will not help; report it with the request ID."
    case .unauthenticated:
      "The request has no valid credentials: the JWT is missing, has expired, or was signed "
        + "without the trip ID. Fix the token provider; a new token is fetched after this error."
    }
  }
}
