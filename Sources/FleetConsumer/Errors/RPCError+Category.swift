public import GRPCWire

extension RPCError {
  /// Who recovers from an error, following Fleet Engine's consumer SDK documentation, which
  /// splits trip-update errors into server and network errors and client errors.
  ///
  /// Docs/ErrorTaxonomy.md lists every code with its category.
  public enum Category: Sendable, Hashable {
    /// A server or network problem: ABORTED, CANCELLED, DEADLINE_EXCEEDED, UNAVAILABLE, and a
    /// connection interrupted mid-call. Transient; the caller need not act. The trip model
    /// recovers by itself, retrying with backoff (at least the server's `RetryInfo` delay).
    case serverOrNetwork
    /// A problem the caller must fix: INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED,
    /// RESOURCE_EXHAUSTED, UNAUTHENTICATED — a bad trip name, a missing trip, a wrong or expired
    /// token, an exhausted quota. The trip model reports it to subscribers and keeps retrying
    /// with backoff until the caller stops following, but it cannot succeed until the cause is
    /// fixed (except that a new token is fetched after UNAUTHENTICATED, and quota refills).
    case client
    /// Neither surely transient nor surely the caller's: UNKNOWN, INTERNAL, UNIMPLEMENTED,
    /// DATA_LOSS, FAILED_PRECONDITION, OUT_OF_RANGE, ALREADY_EXISTS (and OK, which is no error).
    /// These point to a server bug, a wrong endpoint or a broken response. The trip model
    /// reports each one to subscribers and retries with its longest backoff, so a passing server
    /// fault heals by itself while a lasting one stays visible; it never stops following on its
    /// own.
    case other
  }

  /// Who recovers: ``StatusCode/category`` of the code, except that an interrupted connection
  /// is always `.serverOrNetwork`.
  public var category: Category {
    isInterrupted ? .serverOrNetwork : code.category
  }
}

extension RPCError {
  /// Whether the network, not the server, failed the call: the connection dropped or could
  /// not be made (UNAVAILABLE), or the deadline passed (DEADLINE_EXCEEDED), noticed here
  /// rather than answered by the server (``isFromServer``). A model backing off after one
  /// calls again as soon as its connection is ready again; after a server's answer, with
  /// or without `RetryInfo`, it waits out its backoff.
  public var isNetworkFailure: Bool {
    !isFromServer && (isInterrupted || code == .unavailable || code == .deadlineExceeded)
  }
}

extension StatusCode {
  /// The category an error with this code falls in; see ``RPCError/Category``.
  public var category: RPCError.Category {
    switch self {
    case .aborted, .cancelled, .deadlineExceeded, .unavailable:
      .serverOrNetwork
    case .invalidArgument, .notFound, .permissionDenied, .resourceExhausted, .unauthenticated:
      .client
    case .ok, .unknown, .internalError, .unimplemented, .dataLoss, .failedPrecondition,
      .outOfRange, .alreadyExists:
      .other
    }
  }
}
