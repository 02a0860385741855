/// A channel's connectivity, as gRPC defines it (doc/connectivity-semantics-and-api.md).
public enum ConnectivityState: Sendable, Hashable, CustomStringConvertible {
  /// No connection, and none being made: the next call starts one.
  case idle
  /// Connecting (TCP, TLS, and the server's first SETTINGS).
  case connecting
  /// A connection is ready for calls.
  case ready
  /// The last attempt failed; the next waits for the backoff. Calls fail fast with UNAVAILABLE
  /// unless they asked to wait for ready.
  case transientFailure
  /// Closed for good.
  case shutdown

  public var description: String {
    switch self {
    case .idle: "IDLE"
    case .connecting: "CONNECTING"
    case .ready: "READY"
    case .transientFailure: "TRANSIENT_FAILURE"
    case .shutdown: "SHUTDOWN"
    }
  }
}
