public import GRPCWire
public import Tracing

/// A client span per call, through swift-distributed-tracing: named `package.Service/Method`,
/// kind client, a child of the caller's current span (`ServiceContext.current`), with the
/// attributes `rpc.system`, `rpc.service`, `rpc.method`, `server.address` and
/// `rpc.grpc.status_code`, and an error status when the call fails; under a service config's
/// retry or hedging policy, an event `grpc.attempt` per attempt (`grpc.attempt` from 1,
/// `grpc.previous_rpc_attempts`, `grpc.hedged`). The span's context is
/// injected into the call's metadata by the tracer — with swift-otel's W3C propagator, as
/// `traceparent` and `tracestate` — so a server's ``ServerTracingInterceptor`` continues it.
/// The call, a streaming call's body included, runs with the span's context bound.
public struct ClientTracingInterceptor: ClientInterceptor {
  private let tracer: any Tracer

  /// Spans go to `tracer`, by default the process's (`InstrumentationSystem.bootstrap`),
  /// whose default records nothing.
  public init(tracer: any Tracer = InstrumentationSystem.tracer) {
    self.tracer = tracer
  }

  public func intercept(
    _ call: ClientCall, next: (ClientCall) async throws -> ClientCallSummary
  ) async throws -> ClientCallSummary {
    try await traced(tracer, call, next)
  }

  private func traced<T: Tracer>(
    _ tracer: T, _ call: ClientCall, _ next: (ClientCall) async throws -> ClientCallSummary
  ) async throws -> ClientCallSummary {
    let span = tracer.startSpan(spanName(call.method), ofKind: .client)
    defer { span.end() }
    describe(span, call.method)
    span.attributes["server.address"] = call.target
    var call = call
    tracer.inject(span.context, into: &call.options.metadata, using: MetadataInjector())
    // Each attempt under a retry or hedging policy: an event on the call's span.
    let observer = call.options.attemptObserver
    call.options.attemptObserver = { attempt in
      span.addEvent(
        SpanEvent(
          name: "grpc.attempt",
          attributes: [
            "grpc.attempt": .int64(Int64(attempt.number)),
            "grpc.previous_rpc_attempts": .int64(Int64(attempt.number - 1)),
            "grpc.hedged": .bool(attempt.hedged),
          ]))
      observer?(attempt)
    }
    return try await ServiceContext.withValue(span.context) {
      do {
        let summary = try await next(call)
        record(summary.status, on: span)
        return summary
      } catch {
        record(Status(handlerError: error), on: span)
        throw error
      }
    }
  }
}

/// A server span per handled call, through swift-distributed-tracing: the client's context
/// extracted from the request metadata by the tracer (W3C `traceparent`/`tracestate` with
/// swift-otel), a span of kind server named `package.Service/Method` as its child, with the
/// attributes `rpc.system`, `rpc.service`, `rpc.method`, `client.address` and
/// `rpc.grpc.status_code`, and an error status when the handler fails. The handler runs with
/// the span's context bound, so its own spans and outgoing calls continue the trace.
public struct ServerTracingInterceptor: ServerInterceptor {
  private let tracer: any Tracer

  public init(tracer: any Tracer = InstrumentationSystem.tracer) {
    self.tracer = tracer
  }

  public func intercept(_ context: ServerContext, next: (ServerContext) async throws -> Void)
    async throws
  {
    try await traced(tracer, context, next)
  }

  private func traced<T: Tracer>(
    _ tracer: T, _ context: ServerContext, _ next: (ServerContext) async throws -> Void
  ) async throws {
    var parent = ServiceContext.current ?? .topLevel
    tracer.extract(context.requestMetadata, into: &parent, using: MetadataExtractor())
    let span = tracer.startSpan(spanName(context.method), context: parent, ofKind: .server)
    defer { span.end() }
    describe(span, context.method)
    span.attributes["client.address"] = context.peer
    try await ServiceContext.withValue(span.context) {
      do {
        try await next(context)
        record(.ok, on: span)
      } catch {
        record(Status(handlerError: error), on: span)
        throw error
      }
    }
  }
}

/// OpenTelemetry's RPC span name: `package.Service/Method`.
private func spanName(_ method: MethodDescriptor) -> String {
  method.service.isEmpty ? method.method : "\(method.service)/\(method.method)"
}

private func describe(_ span: some Span, _ method: MethodDescriptor) {
  span.attributes["rpc.system"] = "grpc"
  span.attributes["rpc.service"] = method.service
  span.attributes["rpc.method"] = method.method
}

private func record(_ status: Status, on span: some Span) {
  span.attributes["rpc.grpc.status_code"] = status.code.rawValue
  if !status.isOK {
    span.setStatus(SpanStatus(code: .error, message: "\(status.code): \(status.message)"))
  }
}

/// Writes a tracer's propagation fields into call metadata (names lowercased, as HTTP/2
/// requires; a field already there is replaced).
public struct MetadataInjector: Injector {
  public init() {}

  public func inject(_ value: String, forKey key: String, into carrier: inout Metadata) {
    let name = key.lowercased()
    carrier.removeAll(name)
    carrier.add(name, value)
  }
}

/// Reads a tracer's propagation fields from call metadata.
public struct MetadataExtractor: Extractor {
  public init() {}

  public func extract(key: String, from carrier: Metadata) -> String? {
    carrier.first(key.lowercased())
  }
}
