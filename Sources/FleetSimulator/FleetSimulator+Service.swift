public import ServiceLifecycle

/// The simulator in a swift-service-lifecycle `ServiceGroup` (as `fleet-sim` runs it).
extension FleetSimulator: Service {
  /// Serves until the group shuts down gracefully — then GOAWAY, and calls in flight (a
  /// WatchTrip stream) may finish for a second — or until the task is cancelled.
  public func run() async throws {
    do {
      try await gracefulShutdown()
      await shutdown(gracePeriod: .seconds(1))
    } catch {
      await shutdown(gracePeriod: .zero)
    }
  }
}
