public import ServiceLifecycle

/// A server in a swift-service-lifecycle `ServiceGroup`: ``start(host:port:)`` it first (so
/// the port is known before the group runs), then add it to the group.
extension GRPCServer: Service {
  /// Serves until the group shuts down gracefully — then GOAWAY, and calls in flight may
  /// finish for ``ServerOptions/shutdownGracePeriod`` — or until the task is cancelled, which
  /// ends the calls at once. Throws FAILED_PRECONDITION when the server was never started.
  public func run() async throws {
    guard isStarted else {
      throw RPCError(
        code: .failedPrecondition, message: "start the server (start(host:port:)) before running it")
    }
    do {
      try await gracefulShutdown()
      await shutdown(gracePeriod: options.shutdownGracePeriod)
    } catch {
      await shutdown(gracePeriod: .zero)
    }
  }
}

/// A channel in a swift-service-lifecycle `ServiceGroup`, so that it closes with the service.
extension GRPCChannel: Service {
  /// Returns once the group shuts down gracefully, after letting calls in flight finish for
  /// up to 5 s, or once the task is cancelled, after cancelling them; the channel is closed
  /// then (see ``close(gracePeriod:)``).
  public func run() async throws {
    do {
      try await gracefulShutdown()
      await close(gracePeriod: .seconds(5))
    } catch {
      close()
    }
  }
}
