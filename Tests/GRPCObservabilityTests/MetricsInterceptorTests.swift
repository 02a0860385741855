import FleetConsumer
import FleetSimulator
import FleetSync
import GRPCObservability
import GRPCTestingProtos
import GRPCWire
import MetricsTestKit
import Testing

/// The metrics interceptors on both ends of real calls, into swift-metrics' test factory:
/// OpenTelemetry's names and dimensions, one value per call, the status code of each.
@Suite("Metrics interceptors", .timeLimit(.minutes(1)))
struct MetricsInterceptorTests {
  typealias Service = GRPCTesting.TestService

  func dimensions(_ method: String, _ code: Int) -> [(String, String)] {
    [
      ("rpc.system", "grpc"), ("rpc.service", "grpc.testing.TestService"), ("rpc.method", method),
      ("rpc.grpc.status_code", String(code)),
    ]
  }

  @Test("rpc.client.duration and rpc.server.duration: one value per call, by method and status")
  func durations() async throws {
    let metrics = TestMetrics()
    var serverOptions = ServerOptions()
    serverOptions.interceptors = [ServerMetricsInterceptor(factory: metrics)]
    let server = GRPCServer(options: serverOptions)
    server.register(unary: Service.emptyCall) { _, _ in GRPCTesting.Empty() }
    server.register(unary: Service.unaryCall) { _, _ in
      throw RPCError(code: .invalidArgument, message: "no")
    }
    let port = try await server.start()
    var options = ChannelOptions()
    options.interceptors = [ClientMetricsInterceptor(factory: metrics)]
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    defer { channel.close() }
    for _ in 0..<3 { _ = try await channel.unary(Service.emptyCall, GRPCTesting.Empty()) }
    await #expect(throws: RPCError.self) {
      _ = try await channel.unary(Service.unaryCall, GRPCTesting.SimpleRequest())
    }
    for side in ["client", "server"] {
      let ok = try metrics.expectTimer("rpc.\(side).duration", dimensions("EmptyCall", 0))
      #expect(ok.values.count == 3, "\(side): \(ok.values)")
      #expect(ok.values.allSatisfy { $0 > 0 && $0 < 10_000_000_000 })
      let failed = try metrics.expectTimer("rpc.\(side).duration", dimensions("UnaryCall", 3))
      #expect(failed.values.count == 1, "\(side): \(failed.values)")
    }
    await server.shutdown(gracePeriod: .seconds(1))
  }

  @Test("rpc.client.requests_per_rpc and responses_per_rpc count a streaming call's messages")
  func messagesPerRPC() async throws {
    let metrics = TestMetrics()
    let server = GRPCServer()
    server.register(serverStreaming: Service.streamingOutputCall) { request, writer, _ in
      for _ in request.responseParameters {
        try await writer.write(GRPCTesting.StreamingOutputCallResponse())
      }
    }
    let port = try await server.start()
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    var request = GRPCTesting.StreamingOutputCallRequest()
    request.responseParameters = Array(repeating: GRPCTesting.ResponseParameters(), count: 4)
    let options = CallOptions(interceptors: [ClientMetricsInterceptor(factory: metrics)])
    _ = try await channel.serverStreaming(Service.streamingOutputCall, request, options: options) {
      for try await _ in $0 {}
    }
    let labels = dimensions("StreamingOutputCall", 0)
    #expect(try metrics.expectRecorder("rpc.client.requests_per_rpc", labels).values == [1])
    #expect(try metrics.expectRecorder("rpc.client.responses_per_rpc", labels).values == [4])
    await server.shutdown(gracePeriod: .seconds(1))
  }
}

/// The connection meters the transport keeps itself.
@Suite("Connection metrics", .timeLimit(.minutes(1)))
struct ConnectionMetricsTests {
  @Test("rpc.client.connections and rpc.server.connections go up with a connection and down when it closes")
  func connectionCounts() async throws {
    let metrics = TestMetrics()
    var serverOptions = ServerOptions()
    serverOptions.metricsFactory = metrics
    let server = GRPCServer(options: serverOptions)
    server.register(unary: GRPCTesting.TestService.emptyCall) { _, _ in GRPCTesting.Empty() }
    let port = try await server.start()
    var options = ChannelOptions()
    options.metricsFactory = metrics
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    _ = try await channel.unary(GRPCTesting.TestService.emptyCall, GRPCTesting.Empty())
    let client = try metrics.expectMeter(
      "rpc.client.connections", [("server.address", "127.0.0.1:\(port)")])
    let served = try metrics.expectMeter("rpc.server.connections")
    #expect(client.values.last == 1 && served.values.last == 1)
    await channel.close(gracePeriod: .seconds(1))
    await server.shutdown(gracePeriod: .seconds(1))
    #expect(client.values.last == 0, "\(client.values)")
    #expect(served.values.last == 0, "\(served.values)")
  }
}

/// The client metrics interceptor on a followed trip's polls: a loop interceptor, so they stay
/// loop-driven calls with no task.
@Suite("Metrics interceptor on polls", .timeLimit(.minutes(1)))
struct MetricsOnPollsTests {
  /// Records, in the hook a loop-driven call runs on its loop, how the call ended and whether
  /// the hook ran in a task: with an interceptor that is not a loop interceptor beside it,
  /// every hook runs in one.
  struct TaskProbe: LoopClientInterceptor {
    let calls = PosixMutex<[(path: String, status: StatusCode, inTask: Bool)]>([])

    func callEnded(_ call: ClientCall, _ summary: ClientCallSummary, after duration: Duration) {
      let inTask = withUnsafeCurrentTask { $0 != nil }
      calls.withLock { $0.append((call.method.path, summary.status.code, inTask)) }
    }
  }

  @Test("a TripService with ClientMetricsInterceptor polls in no task, and records each GetTrip")
  func pollsWithoutTask() async throws {
    let metrics = TestMetrics()
    let probe = TaskProbe()
    let simulator = try await FleetSimulator.start()
    let name = try simulator.createDemoTrip()
    var options = TripService.Options()
    options.pollInterval = .milliseconds(100)
    options.interceptors = [ClientMetricsInterceptor(factory: metrics), probe]
    let service = try TripService(
      configuration: .init(
        endpoint: try .init(simulator.endpoint), transportSecurity: .plaintext,
        providerID: "demo-provider", accessTokenProvider: FixedAccessTokenProvider(AccessToken("t")),
        options: options))
    var updates = try service.tripModel(forTripName: name).updates(includingRefreshes: true)
      .makeAsyncIterator()
    var refreshes = 0
    while refreshes < 3, let event = await updates.next() {
      if case .refreshed = event { refreshes += 1 }
    }
    service.shutdown()
    await simulator.shutdown(gracePeriod: .seconds(1))
    let calls = probe.calls.withLock { $0 }
    let polls = calls.filter { $0.path == "/maps.fleetengine.v1.TripService/GetTrip" }
    #expect(polls.count >= 3, "\(calls)")
    #expect(polls.allSatisfy { !$0.inTask }, "a poll ran its interceptors in a task: \(calls)")
    let durations = try metrics.expectTimer(
      "rpc.client.duration",
      [
        ("rpc.system", "grpc"), ("rpc.service", "maps.fleetengine.v1.TripService"),
        ("rpc.method", "GetTrip"), ("rpc.grpc.status_code", "0"),
      ])
    // One OK duration per GetTrip the probe, beside the metrics interceptor, saw end OK.
    let answered = polls.filter { $0.status == .ok }.count
    #expect(answered >= 3, "\(calls)")
    #expect(durations.values.count == answered, "\(durations.values) for \(calls)")
  }
}
