public import ServiceLifecycle

/// A trip service in a swift-service-lifecycle `ServiceGroup`, so that following stops with
/// the service that follows.
extension TripService: Service {
  /// Returns once the group shuts down gracefully or the task is cancelled, after
  /// ``shutdown()``: models stop following, calls in flight are cancelled, connections close.
  public func run() async throws {
    try? await gracefulShutdown()
    shutdown()
  }
}
