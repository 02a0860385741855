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
public struct ClientMetricsInterceptor: ClientInterceptor {
  private let metrics: RPCMetrics

  public init(factory: any MetricsFactory = MetricsSystem.factory) {
    metrics = RPCMetrics(side: "client", factory: factory)
  }

  public func intercept(
    _ call: ClientCall, next: (ClientCall) async throws -> ClientCallSummary
  ) async throws -> ClientCallSummary {
    let start = ContinuousClock.now
    do {
      let summary = try await next(call)
      let streaming = call.kind != .unary
      metrics.record(
        call.method, summary.status.code, since: start,
        messages: streaming ? (summary.requestMessages, summary.responseMessages) : nil)
      return summary
    } catch {
      metrics.record(call.method, Status(handlerError: error).code, since: start, messages: nil)
      throw error
    }
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
      metrics.record(context.method, .ok, since: start, messages: nil)
    } catch {
      metrics.record(context.method, Status(handlerError: error).code, since: start, messages: nil)
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

  func record(
    _ method: MethodDescriptor, _ code: StatusCode, since start: ContinuousClock.Instant,
    messages: (requests: Int, responses: Int)?
  ) {
    let elapsed = start.duration(to: .now)
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
