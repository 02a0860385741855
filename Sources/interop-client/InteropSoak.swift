import GRPCTestingProtos
import GRPCWire

/// The soak flags, as grpc-go's and the C++ interop clients name them.
struct SoakSettings: Sendable {
  /// large_unary calls to make.
  var iterations = 10
  /// Iterations that may fail (a status other than OK, a wrong response, or slower than
  /// ``maxAcceptableLatency``) without failing the case.
  var maxFailures = 0
  /// An iteration slower than this fails, whatever its status.
  var maxAcceptableLatency: Duration = .milliseconds(1_000)
  /// The case fails if its iterations have not all run by then.
  var overallTimeout: Duration = .seconds(10)
  /// The least time from one iteration's start to the next one's.
  var minTimeBetweenRPCs: Duration = .zero
}

extension InteropCases {
  /// rpc_soak: `iterations` large_unary calls in sequence on one channel.
  func rpcSoak(_ settings: SoakSettings) async throws {
    try await soak(settings) { try await largeUnaryIteration(on: channel) }
  }

  /// channel_soak: the same, each on a new channel (its connection opened and closed in the
  /// iteration), which puts name resolution, connecting and teardown on the hot path.
  func channelSoak(_ settings: SoakSettings, makeChannel: () -> GRPCChannel) async throws {
    try await soak(settings) {
      let fresh = makeChannel()
      defer { fresh.close() }
      try await largeUnaryIteration(on: fresh)
    }
  }

  private func largeUnaryIteration(on channel: GRPCChannel) async throws {
    let response = try await channel.unary(Service.unaryCall, simpleRequest())
    try checkPayload(response.message.payload, size: 314_159, "the response")
  }

  /// The loop of the C++ client's PerformSoakTest: no deadline on the calls (each one's time
  /// is measured and compared instead), a line per failed iteration, a summary at the end.
  private func soak(_ settings: SoakSettings, _ iteration: () async throws -> Void) async throws {
    let clock = ContinuousClock()
    let overallDeadline = clock.now + settings.overallTimeout
    var latencies: [Duration] = []
    var failures = 0
    while latencies.count < settings.iterations && clock.now < overallDeadline {
      let start = clock.now
      var failure: String?
      do {
        try await iteration()
      } catch {
        failure = "\(error)"
      }
      let elapsed = clock.now - start
      if failure == nil && elapsed > settings.maxAcceptableLatency {
        failure = "\(milliseconds(elapsed)) ms exceeds max acceptable latency: \(milliseconds(settings.maxAcceptableLatency)) ms"
      }
      if let failure {
        failures += 1
        print("soak iteration: \(latencies.count) elapsed_ms: \(milliseconds(elapsed)) failed: \(failure)")
      }
      latencies.append(elapsed)
      try await Task.sleep(until: start + settings.minTimeBetweenRPCs, clock: clock)
    }
    let sorted = latencies.sorted()
    func percentile(_ p: Double) -> Int {
      sorted.isEmpty ? 0 : milliseconds(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
    }
    let summary =
      "soak test ran: \(latencies.count) of \(settings.iterations) iterations. total_failures: \(failures). max_failures_threshold: \(settings.maxFailures). median_soak_iteration_latency: \(percentile(0.5)) ms. 90th_soak_iteration_latency: \(percentile(0.9)) ms. worst_soak_iteration_latency: \(sorted.last.map(milliseconds) ?? 0) ms."
    print(summary)
    try check(
      latencies.count == settings.iterations,
      "only \(latencies.count) of \(settings.iterations) iterations ran in \(settings.overallTimeout)")
    try check(
      failures <= settings.maxFailures,
      "\(failures) iterations failed, more than \(settings.maxFailures)")
  }

  /// max_concurrent_streams_connection_scaling, against a server whose
  /// MAX_CONCURRENT_STREAMS is 1: a FullDuplexCall is left open after a first response, and
  /// a second one still gets its responses, which it can only get on a second connection
  /// the channel opened for it. Both then end OK.
  func maxConcurrentStreamsConnectionScaling() async throws {
    let request = streamingOutput(responseSize: 31_415, payloadSize: 27_182)
    try await channel.bidirectionalStreaming(Service.fullDuplexCall) { firstWriter, firstResponses in
      try await firstWriter.write(request)
      var first = firstResponses.makeAsyncIterator()
      let response = try await first.next()
      try checkPayload(response?.payload, size: 31_415, "the first call's response")
      try await channel.bidirectionalStreaming(Service.fullDuplexCall) { secondWriter, secondResponses in
        try await secondWriter.write(request)
        var second = secondResponses.makeAsyncIterator()
        let response = try await second.next()
        try checkPayload(response?.payload, size: 31_415, "the second call's response")
        secondWriter.finish()
        try check(try await second.next() == nil, "the second call answered more than once")
      }
      try await firstWriter.write(request)
      try checkPayload(try await first.next()?.payload, size: 31_415, "the first call's second response")
      firstWriter.finish()
      try check(try await first.next() == nil, "the first call answered more than asked")
    }
  }
}

private func milliseconds(_ duration: Duration) -> Int {
  Int(duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000)
}
