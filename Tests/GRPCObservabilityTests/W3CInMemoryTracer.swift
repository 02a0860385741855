import InMemoryTracing
import Tracing

/// swift-distributed-tracing's in-memory tracer, propagating its spans as W3C trace context
/// (`traceparent: 00-<trace id>-<span id>-01`), as swift-otel's propagator does; its IDs are
/// random 128-bit trace and 64-bit span IDs in lowercase hex.
struct W3CInMemoryTracer: Tracer {
  typealias Span = InMemorySpan

  let recorder = InMemoryTracer(
    idGenerator: InMemoryTracer.IDGenerator(
      nextTraceID: { hex(UInt64.random(in: 1...UInt64.max)) + hex(UInt64.random(in: 0...UInt64.max)) },
      nextSpanID: { hex(UInt64.random(in: 1...UInt64.max)) }))

  func startSpan<Instant: TracerInstant>(
    _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
    at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
  ) -> InMemorySpan {
    recorder.startSpan(
      operationName, context: context(), ofKind: kind, at: instant(), function: function,
      file: fileID, line: line)
  }

  func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? {
    recorder.activeSpan(identifiedBy: context)
  }

  func forceFlush() {}

  func inject<Carrier, Inject: Injector>(
    _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
  ) where Inject.Carrier == Carrier {
    guard let span = context.inMemorySpanContext else { return }
    injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
  }

  func extract<Carrier, Extract: Extractor>(
    _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
  ) where Extract.Carrier == Carrier {
    guard let value = extractor.extract(key: "traceparent", from: carrier) else { return }
    let parts = value.split(separator: "-")
    guard parts.count == 4, parts[0] == "00", parts[1].count == 32, parts[2].count == 16 else {
      return
    }
    context.inMemorySpanContext = InMemorySpanContext(
      traceID: String(parts[1]), spanID: String(parts[2]), parentSpanID: nil)
  }

  var finishedSpans: [FinishedInMemorySpan] { recorder.finishedSpans }
}

private func hex(_ value: UInt64) -> String {
  let digits = String(value, radix: 16)
  return String(repeating: "0", count: 16 - digits.count) + digits
}
