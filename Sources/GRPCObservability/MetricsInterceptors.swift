public import CoreMetrics
public import GRPCWire
internal import FleetSync

/// Client metrics after OpenTelemetry's RPC semantic conventions, through swift-metrics:
///
/// - `rpc.client.duration` (a timer; seconds where the backend has units) per call, from the
///   call's start to its end as the caller saw it;
/// - `rpc.client.requests_per_rpc` and `rpc.client.responses_per_rpc` (recorders) per
///   streaming call that ended with a summary;
///
/// each with dimensions `rpc.system` = `grpc`, `rpc.service`, `rpc.method` and
/// `rpc.grpc.status_code` (the numeric code). Metrics go to `factory`, by default the
/// process's (`MetricsSystem.bootstrap`), whose default discards them.
///
/// A loop interceptor: a loop-driven call (`GRPCChannel.startUnary`, a `TripService`'s polls)
/// with it stays on its loop, with no task.
public struct ClientMetricsInterceptor: LoopClientInterceptor {
  private let metrics: RPCMetrics

  public init(factory: any MetricsFactory = MetricsSystem.factory) {
    metrics = RPCMetrics(side: "client", factory: factory)
  }

  /// A call made in a task: as ``callEnded(_:_:after:)``, but a call that threw records no
  /// message counts (there is no summary to take them from).
  public func intercept(
    _ call: ClientCall, next: (ClientCall) async throws -> ClientCallSummary
  ) async throws -> ClientCallSummary {
    let start = ContinuousClock.now
    do {
      let summary = try await next(call)
      callEnded(call, summary, after: start.duration(to: .now))
      return summary
    } catch {
      metrics.record(
        call.method, Status(handlerError: error).code, after: start.duration(to: .now),
        messages: nil)
      throw error
    }
  }

  /// The call ended with `summary`, `duration` after it started: its duration, and a
  /// streaming call's message counts.
  public func callEnded(_ call: ClientCall, _ summary: ClientCallSummary, after duration: Duration)
  {
    let streaming = call.kind != .unary
    metrics.record(
      call.method, summary.status.code, after: duration,
      messages: streaming ? (summary.requestMessages, summary.responseMessages) : nil)
  }
}

/// Server metrics after OpenTelemetry's RPC semantic conventions, through swift-metrics:
/// `rpc.server.duration` (a timer) per handled call, from the handler's start to its end,
/// with dimensions `rpc.system` = `grpc`, `rpc.service`, `rpc.method` and
/// `rpc.grpc.status_code`. Metrics go to `factory`, by default the process's.
public struct ServerMetricsInterceptor: ServerInterceptor {
  private let metrics: RPCMetrics

  public init(factory: any MetricsFactory = MetricsSystem.factory) {
    metrics = RPCMetrics(side: "server", factory: factory)
  }

  public func intercept(_ context: ServerContext, next: (ServerContext) async throws -> Void)
    async throws
  {
    let start = ContinuousClock.now
    do {
      try await next(context)
      metrics.record(context.method, .ok, after: start.duration(to: .now), messages: nil)
    } catch {
      metrics.record(
        context.method, Status(handlerError: error).code, after: start.duration(to: .now),
        messages: nil)
      throw error
    }
  }
}

/// One side's RPC metrics, made once per method and status and kept: a backend's factory
/// call (a registry lookup under a lock) per call would cost more than recording.
final class RPCMetrics: Sendable {
  private let factory: any MetricsFactory
  private let durationLabel: String
  private let requestsLabel: String
  private let responsesLabel: String
  private let countsMessages: Bool
  private let made = PosixMutex<[Key: Made]>([:])

  private struct Key: Hashable {
    let method: MethodDescriptor
    let code: StatusCode
  }

  private struct Made: Sendable {
    let duration: Timer
    /// Only for the client, which knows a call's message counts.
    let requests: Recorder?
    let responses: Recorder?
  }

  /// A bound on the methods × codes kept, against a peer that calls ever new paths.
  private static let limit = 4_096

  init(side: String, factory: any MetricsFactory) {
    self.factory = factory
    countsMessages = side == "client"
    durationLabel = "rpc.\(side).duration"
    requestsLabel = "rpc.\(side).requests_per_rpc"
    responsesLabel = "rpc.\(side).responses_per_rpc"
  }

  /// One call of `method` that ended with `code`, `elapsed` after it started.
  func record(
    _ method: MethodDescriptor, _ code: StatusCode, after elapsed: Duration,
    messages: (requests: Int, responses: Int)?
  ) {
    let metrics = metrics(for: Key(method: method, code: code))
    metrics.duration.recordNanoseconds(
      elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    if let messages {
      metrics.requests?.record(messages.requests)
      metrics.responses?.record(messages.responses)
    }
  }

  private func metrics(for key: Key) -> Made {
    if let known = made.withLock({ $0[key] }) { return known }
    let dimensions = [
      ("rpc.system", "grpc"), ("rpc.service", key.method.service), ("rpc.method", key.method.method),
      ("rpc.grpc.status_code", String(key.code.rawValue)),
    ]
    let new = Made(
      duration: Timer(label: durationLabel, dimensions: dimensions, factory: factory),
      requests: countsMessages
        ? Recorder(label: requestsLabel, dimensions: dimensions, factory: factory) : nil,
      responses: countsMessages
        ? Recorder(label: responsesLabel, dimensions: dimensions, factory: factory) : nil)
    return made.withLock { made in
      if let raced = made[key] { return raced }
      if made.count < Self.limit { made[key] = new }
      return new
    }
  }
}
