import FleetConsumer
import FleetSimulator
import GRPCObservability
import GRPCTestingProtos
import GRPCWire
import InMemoryTracing
import Testing
import Tracing

/// The tracing interceptors on both ends of real calls: a client span per call, a server span
/// per handled call continuing the client's trace through `traceparent`.
@Suite("Tracing interceptors", .timeLimit(.minutes(1)))
struct TracingInterceptorTests {
  typealias Service = GRPCTesting.TestService

  @Test("A failed call's client and server spans: one trace, parent and child, error status")
  func failedCall() async throws {
    let tracer = W3CInMemoryTracer()
    var serverOptions = ServerOptions()
    serverOptions.interceptors = [ServerTracingInterceptor(tracer: tracer)]
    let server = GRPCServer(options: serverOptions)
    server.register(unary: Service.unaryCall) { _, context in
      #expect(context.requestMetadata.first("traceparent")?.hasPrefix("00-") == true)
      throw RPCError(code: .notFound, message: "nothing here")
    }
    let port = try await server.start()
    var options = ChannelOptions()
    options.interceptors = [ClientTracingInterceptor(tracer: tracer)]
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    defer { channel.close() }
    await #expect(throws: RPCError.self) {
      _ = try await channel.unary(Service.unaryCall, GRPCTesting.SimpleRequest())
    }
    await server.shutdown(gracePeriod: .seconds(1))
    let spans = tracer.finishedSpans
    let client = try #require(spans.first { $0.kind == .client })
    let server_ = try #require(spans.first { $0.kind == .server })
    #expect(client.operationName == "grpc.testing.TestService/UnaryCall")
    #expect(server_.operationName == "grpc.testing.TestService/UnaryCall")
    #expect(server_.spanContext.traceID == client.spanContext.traceID)
    #expect(server_.spanContext.parentSpanID == client.spanContext.spanID)
    #expect(client.status?.code == .error && server_.status?.code == .error)
    #expect(client.attributes["rpc.grpc.status_code"]?.toSpanAttribute() == .int64(5))
    #expect(server_.attributes["rpc.method"]?.toSpanAttribute() == .string("UnaryCall"))
  }

  @Test("A followed trip's poll, traced: the client span is the parent of the simulator's server span")
  func followedTripPoll() async throws {
    let tracer = W3CInMemoryTracer()
    var simulatorOptions = SimulatorOptions()
    simulatorOptions.interceptors = [ServerTracingInterceptor(tracer: tracer)]
    let simulator = try await FleetSimulator.start(options: simulatorOptions)
    let name = try simulator.createDemoTrip()
    var options = TripService.Options()
    options.interceptors = [ClientTracingInterceptor(tracer: tracer)]
    let service = try TripService(
      configuration: .init(
        endpoint: try .init(simulator.endpoint), transportSecurity: .plaintext,
        providerID: "demo-provider",
        accessTokenProvider: FixedAccessTokenProvider(AccessToken("demo-token")),
        options: options))
    let model = try service.tripModel(forTripName: name)
    // The first poll's result: the model's own events (its state) may come before it.
    polled: for await event in model.updates(includingRefreshes: true) {
      switch event {
      case .refreshed: break polled
      case .updateFailed(let error):
        Issue.record("the first poll failed: \(error)")
        break polled
      default: continue
      }
    }
    service.shutdown()
    await simulator.shutdown(gracePeriod: .seconds(1))
    let spans = tracer.finishedSpans
    let poll = try #require(
      spans.first { $0.kind == .client && $0.operationName == "maps.fleetengine.v1.TripService/GetTrip" })
    let served = try #require(
      spans.first { $0.kind == .server && $0.spanContext.parentSpanID == poll.spanContext.spanID },
      "no server span is a child of the poll's span: \(spans.map { "\($0.kind) \($0.operationName)" })")
    #expect(served.spanContext.traceID == poll.spanContext.traceID)
    #expect(served.operationName == "maps.fleetengine.v1.TripService/GetTrip")
  }
}
