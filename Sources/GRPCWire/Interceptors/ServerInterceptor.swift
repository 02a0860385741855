/// Code that runs around the handlers of a server (``ServerOptions/interceptors``) or of one
/// method (the `interceptors` of `GRPCServer.register`): logging, metrics, tracing,
/// authentication, policy.
///
/// An interceptor gets the call's ``ServerContext`` (method, the client's metadata, peer,
/// deadline) and `next`, the rest of the chain ending in the handler. It may refuse the call by
/// throwing without calling `next` (an ``RPCError`` is the status the client gets), set
/// response metadata on the context, bind task-local values around `next` (the handler sees
/// them), and observe the outcome: `next` returns when the handler succeeded (status OK) and
/// throws what the handler threw otherwise (``Status/init(handlerError:)`` is the status sent).
///
/// The server's interceptors run first, in order, then the method's; the first one listed is
/// the outermost.
public protocol ServerInterceptor: Sendable {
  func intercept(
    _ context: ServerContext,
    next: (ServerContext) async throws -> Void
  ) async throws
}

/// Runs `interceptors` in order around `handler`.
func intercept(
  _ interceptors: ArraySlice<any ServerInterceptor>, _ context: ServerContext,
  _ handler: (ServerContext) async throws -> Void
) async throws {
  guard let first = interceptors.first else { return try await handler(context) }
  try await first.intercept(context) { context in
    try await intercept(interceptors.dropFirst(), context, handler)
  }
}

extension Status {
  /// The status a server sends for a handler (or interceptor) that threw `error`: an
  /// ``RPCError``'s own status, CANCELLED for a cancelled task, otherwise UNKNOWN.
  public init(handlerError error: any Error) {
    switch error {
    case let error as RPCError: self = error.status
    case is CancellationError: self = Status(code: .cancelled, message: "the handler was cancelled")
    default: self = Status(code: .unknown, message: "the handler failed: \(error)")
    }
  }
}
