import GRPCObservability
import GRPCTestingProtos
import GRPCWire
import InMemoryTracing
import Synchronization
import Testing
import Tracing

/// The client tracing interceptor records each attempt a retry or hedging policy makes as an
/// event on the call's span, whatever the call's kind and however it ends.
@Suite("Attempts in traces", .timeLimit(.minutes(1)))
struct AttemptTracingTests {
  typealias Service = GRPCTesting.TestService

  /// A server whose unary and client-streaming handlers fail the first `failing` calls of
  /// each with UNAVAILABLE, and a channel retrying UNAVAILABLE 4 times through the tracer.
  static func withRetriedService(
    failing: Int, tracer: W3CInMemoryTracer, _ body: (GRPCChannel) async throws -> Void
  ) async throws {
    let seen = Mutex<[String: Int]>([:])
    @Sendable func fails(_ method: String) -> Bool {
      seen.withLock { counts in
        counts[method, default: 0] += 1
        return counts[method]! <= failing
      }
    }
    let server = GRPCServer()
    server.register(unary: Service.unaryCall) { _, _ in
      if fails("unary") { throw RPCError(code: .unavailable, message: "not yet") }
      return GRPCTesting.SimpleResponse()
    }
    server.register(clientStreaming: Service.streamingInputCall) { requests, _ in
      var size: Int32 = 0
      for try await request in requests { size += Int32(request.payload?.body.count ?? 0) }
      if fails("streaming") { throw RPCError(code: .unavailable, message: "not yet") }
      var response = GRPCTesting.StreamingInputCallResponse()
      response.aggregatedPayloadSize = size
      return response
    }
    let port = try await server.start()
    var options = ChannelOptions()
    options.serviceConfig = try ServiceConfig(
      json: """
        {"methodConfig": [{"name": [{"service": "grpc.testing.TestService"}],
          "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
            "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}
        """)
    options.interceptors = [ClientTracingInterceptor(tracer: tracer)]
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    do {
      try await body(channel)
    } catch {
      channel.close()
      await server.shutdown(gracePeriod: .seconds(1))
      throw error
    }
    channel.close()
    await server.shutdown(gracePeriod: .seconds(1))
  }

  /// The `grpc.previous_rpc_attempts` of the client span's `grpc.attempt` events, in order.
  static func attempts(_ tracer: W3CInMemoryTracer, _ operation: String) throws -> [Int64] {
    let span = try #require(
      tracer.finishedSpans.first { $0.kind == .client && $0.operationName == operation })
    return span.events.filter { $0.name == "grpc.attempt" }.compactMap { event in
      guard
        case .int64(let value)? = event.attributes["grpc.previous_rpc_attempts"]?.toSpanAttribute()
      else { return nil }
      return value
    }
  }

  @Test("a unary call retried twice: three grpc.attempt events on its span, previous 0, 1, 2")
  func unaryAttempts() async throws {
    let tracer = W3CInMemoryTracer()
    try await Self.withRetriedService(failing: 2, tracer: tracer) { channel in
      _ = try await channel.unary(
        Service.unaryCall, GRPCTesting.SimpleRequest(), options: CallOptions(timeout: .seconds(20)))
    }
    #expect(try Self.attempts(tracer, "grpc.testing.TestService/UnaryCall") == [0, 1, 2])
  }

  @Test(
    "a client-streaming call retried once, and one whose retries run out: an event per attempt"
  )
  func streamingAttempts() async throws {
    let tracer = W3CInMemoryTracer()
    try await Self.withRetriedService(failing: 1, tracer: tracer) { channel in
      let response = try await channel.clientStreaming(
        Service.streamingInputCall, options: CallOptions(timeout: .seconds(20))
      ) { writer in
        for size in [3, 5] {
          var request = GRPCTesting.StreamingInputCallRequest()
          request.payload = GRPCTesting.Payload()
          request.payload?.body = [UInt8](repeating: 1, count: size)
          try await writer.write(request)
        }
      }
      // The retried attempt got both messages again.
      #expect(response.message.aggregatedPayloadSize == 8)
    }
    #expect(try Self.attempts(tracer, "grpc.testing.TestService/StreamingInputCall") == [0, 1])

    let failed = W3CInMemoryTracer()
    try await Self.withRetriedService(failing: 10, tracer: failed) { channel in
      await #expect(throws: RPCError.self) {
        _ = try await channel.unary(
          Service.unaryCall, GRPCTesting.SimpleRequest(),
          options: CallOptions(timeout: .seconds(20)))
      }
    }
    #expect(try Self.attempts(failed, "grpc.testing.TestService/UnaryCall") == [0, 1, 2, 3])
  }
}
