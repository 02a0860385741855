internal import GRPCServiceProtos

/// The serving status of a service, as `grpc.health.v1.Health` reports it.
public enum HealthStatus: Sendable, Hashable, CustomStringConvertible {
  /// Not known yet (UNKNOWN): the service exists but has not said whether it can serve.
  case unknown
  /// The service takes calls (SERVING).
  case serving
  /// The service does not take calls: it is starting, shutting down, or something it needs
  /// is down (NOT_SERVING). Load balancers send its calls elsewhere.
  case notServing

  /// The name on the wire: `SERVING`, `NOT_SERVING` or `UNKNOWN`.
  public var description: String { wire.description }

  var wire: GRPCHealthV1.HealthCheckResponse.ServingStatus {
    switch self {
    case .unknown: .unknown
    case .serving: .serving
    case .notServing: .notServing
    }
  }
}
