public import GRPCWire
public import Logging

/// Logs each call a client makes (swift-log): `call started` at trace, `call ended` at debug
/// with the method, kind, status code, messages each way and duration; a failed call's status
/// message is logged too. Metadata values — tokens among them — never appear.
///
/// The tools add it when their log level is debug or lower; a channel that does not list it
/// pays nothing for it. A loop interceptor: a loop-driven call (`GRPCChannel.startUnary`, a
/// `TripService`'s polls) with it stays on its loop, with no task, and logs only `call ended`
/// (a loop interceptor hears of a call when it is prepared, once for a call made again and
/// again, and when it ends).
public struct ClientLoggingInterceptor: LoopClientInterceptor {
  private let logger: Logger

  public init(logger: Logger) {
    self.logger = logger
  }

  /// A call made in a task: `call started`, then as ``callEnded(_:_:after:)``, but a call
  /// that threw logs no message counts (there is no summary to take them from).
  public func intercept(
    _ call: ClientCall, next: (ClientCall) async throws -> ClientCallSummary
  ) async throws -> ClientCallSummary {
    let start = ContinuousClock.now
    logger(call).trace("call started", metadata: ["grpc.kind": "\(call.kind.rawValue)"])
    do {
      let summary = try await next(call)
      callEnded(call, summary, after: start.duration(to: .now))
      return summary
    } catch {
      let status = Status(handlerError: error)
      logger(call).debug(
        "call ended",
        metadata: [
          "grpc.status": "\(status.code)", "grpc.duration": "\(start.duration(to: .now))",
        ].merging(Self.message(status)) { first, _ in first })
      throw error
    }
  }

  /// Logs `call ended` with the summary's status, message counts and `duration`.
  public func callEnded(_ call: ClientCall, _ summary: ClientCallSummary, after duration: Duration)
  {
    logger(call).debug(
      "call ended",
      metadata: [
        "grpc.status": "\(summary.status.code)",
        "grpc.requests": "\(summary.requestMessages)",
        "grpc.responses": "\(summary.responseMessages)",
        "grpc.duration": "\(duration)",
      ].merging(Self.message(summary.status)) { first, _ in first })
  }

  /// The logger with the call's method.
  private func logger(_ call: ClientCall) -> Logger {
    var logger = self.logger
    logger[metadataKey: "grpc.method"] = "\(call.method.path)"
    return logger
  }

  /// The status message of a failed call, as metadata.
  static func message(_ status: Status) -> Logger.Metadata {
    status.code == .ok || status.message.isEmpty ? [:] : ["grpc.message": "\(status.message)"]
  }
}

/// Logs each call a server handles (swift-log): `call started` at trace, `call handled` at
/// debug with the method, peer, status code and duration. Metadata values never appear.
///
/// A server interceptor makes handlers run as tasks (see `GRPCServer.registerOnLoop`), so the
/// tools add it only when their log level is debug or lower.
public struct ServerLoggingInterceptor: ServerInterceptor {
  private let logger: Logger

  public init(logger: Logger) {
    self.logger = logger
  }

  public func intercept(_ context: ServerContext, next: (ServerContext) async throws -> Void)
    async throws
  {
    let start = ContinuousClock.now
    var logger = self.logger
    logger[metadataKey: "grpc.method"] = "\(context.path)"
    logger[metadataKey: "grpc.peer"] = "\(context.peer)"
    logger.trace("call started")
    do {
      try await next(context)
      logger.debug(
        "call handled",
        metadata: ["grpc.status": "\(StatusCode.ok)", "grpc.duration": "\(ContinuousClock.now - start)"])
    } catch {
      let status = Status(handlerError: error)
      logger.debug(
        "call handled",
        metadata: [
          "grpc.status": "\(status.code)", "grpc.duration": "\(ContinuousClock.now - start)",
        ].merging(ClientLoggingInterceptor.message(status)) { first, _ in first })
      throw error
    }
  }
}
