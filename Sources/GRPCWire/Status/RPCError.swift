/// A failed gRPC call: the error every failure of this package becomes, whether the server
/// sent a status, a proxy answered plain HTTP, the connection dropped, or something failed
/// locally.
///
/// It carries the status `code`, a `message` a person can act on, the response's trailing
/// `metadata`, the Google error `details` when the server sent a `google.rpc.Status`, and the
/// underlying `cause` of a local failure. ``isInterrupted`` tells a connection that dropped
/// mid-call from a server's own UNAVAILABLE.
///
/// Bridges to `NSError` with gRPC's domain `io.grpc` and the code's number:
/// `(error as NSError).domain == "io.grpc"`. `description` never includes metadata values.
///
/// Equality and hashing compare everything except `cause`, which is any error and may not be
/// comparable, and ``isFromServer``, which says where the error came from, not what it says.
public struct RPCError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The status code: the server's `grpc-status`, or the code gRPC assigns a local failure.
  public var code: StatusCode
  /// What went wrong, for a person: the server's `grpc-message`, or ours for local failures.
  public var message: String
  /// The response's trailing metadata (its initial metadata when the server answered with
  /// trailers only); empty for local failures.
  public var metadata: Metadata
  /// The typed details of the server's `grpc-status-details-bin`, in order; empty when none
  /// were sent or they could not be used (then ``detailsProblem`` says why).
  public var details: [ErrorDetail]
  /// Why details the server sent could not be used, or not all of them: not a valid
  /// `google.rpc.Status`, a `google.rpc.Status` whose code disagrees with `grpc-status` (its
  /// details are then dropped), or a detail of a known type whose bytes do not decode (kept as
  /// `.other`). Nil when there was nothing wrong. The error's ``code`` is always the wire's.
  public var detailsProblem: String?
  /// The HTTP status of a response that was not gRPC (no `grpc-status`); ``code`` is then
  /// mapped from it by ``StatusCode/init(httpStatus:)``. Nil for gRPC responses.
  public var httpStatus: Int?
  /// Whether the connection dropped while the call was in flight; ``code`` is then
  /// `.unavailable` and ``category`` `.serverOrNetwork`.
  public var isInterrupted: Bool
  /// The local error behind this one (a socket or TLS error, a decoding error, an invalid
  /// metadata key); nil when the server sent the status.
  public var cause: (any Error & Sendable)?
  /// Whether the peer answered the call with this status (its `grpc-status`, or an HTTP
  /// response without one), rather than the failure being noticed here: a connection that
  /// dropped or could not be made, a deadline that passed, a call that could not be sent.
  /// A retry that waits for the network to come back applies only to the latter; a server's
  /// answer keeps its backoff. Like ``cause``, left out of equality and hashing.
  public var isFromServer: Bool

  /// The encoded `google.rpc.Status` as received, so ``status`` can pass it on unchanged.
  var receivedDetailsBytes: [UInt8]?
  /// The server's `grpc-retry-pushback-ms`, for a retry or hedging policy; left out of
  /// equality and hashing, like ``cause``.
  var retryPushback: RetryPushback?

  /// An error with no details, e.g. for a local failure.
  public init(
    code: StatusCode, message: String, metadata: Metadata = [:],
    cause: (any Error & Sendable)? = nil
  ) {
    self.code = code
    self.message = message
    self.metadata = metadata
    self.details = []
    self.detailsProblem = nil
    self.httpStatus = nil
    self.isInterrupted = false
    self.cause = cause
    self.isFromServer = false
    self.receivedDetailsBytes = nil
    self.retryPushback = nil
  }

  /// `CODE: message`, then the HTTP status, the details, any problem with them and the cause,
  /// when there are any. Metadata is left out: it may hold credentials.
  public var description: String {
    var text = message.isEmpty ? code.name : "\(code.name): \(message)"
    if let httpStatus { text += " (HTTP \(httpStatus))" }
    if !details.isEmpty {
      text += " [details: \(details.map(\.description).joined(separator: "; "))]"
    }
    if let detailsProblem { text += " [details unusable: \(detailsProblem)]" }
    if let cause { text += " (cause: \(cause))" }
    return text
  }

  /// Whether everything but ``cause`` and ``isFromServer`` is equal.
  public static func == (lhs: RPCError, rhs: RPCError) -> Bool {
    lhs.code == rhs.code && lhs.message == rhs.message && lhs.metadata == rhs.metadata
      && lhs.details == rhs.details && lhs.detailsProblem == rhs.detailsProblem
      && lhs.httpStatus == rhs.httpStatus && lhs.isInterrupted == rhs.isInterrupted
      && lhs.receivedDetailsBytes == rhs.receivedDetailsBytes
  }

  /// Hashes everything but ``cause`` and ``isFromServer``.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(code)
    hasher.combine(message)
    hasher.combine(metadata)
    hasher.combine(details)
    hasher.combine(detailsProblem)
    hasher.combine(httpStatus)
    hasher.combine(isInterrupted)
    hasher.combine(receivedDetailsBytes)
  }
}
