import GRPCTestingProtos
import GRPCWire
import Testing

/// A size a client asks the grpc.testing services for is checked before anything is
/// allocated: negative is INVALID_ARGUMENT, above the server's message limit
/// RESOURCE_EXHAUSTED, and the server serves on.
@Suite("Simulator: requested payload sizes are validated")
struct PayloadSizeTests {
  typealias Benchmark = GRPCTesting.BenchmarkService
  typealias Test = GRPCTesting.TestService

  /// Expects `call` to fail with `code`, then a normal call on the same channel to succeed.
  static func expectRefused(
    _ code: StatusCode, _ harness: SimulatorHarness, _ call: () async throws -> Void
  ) async throws {
    let error = try await #require(throws: RPCError.self) { try await call() }
    #expect(error.code == code, "\(error)")
    let served = try await harness.channel.unary(
      Benchmark.unaryCall, GRPCTestingServicesTests.request(responseSize: 8)
    ).message
    #expect(served.payload?.body.count == 8, "the server no longer serves after the refusal")
  }

  @Test("TestService/UnaryCall with response_size -1 is INVALID_ARGUMENT; the server serves on")
  func negativeUnary() async throws {
    try await SimulatorHarness.with { harness in
      var request = GRPCTesting.SimpleRequest()
      request.responseSize = -1
      try await Self.expectRefused(.invalidArgument, harness) {
        _ = try await harness.channel.unary(Test.unaryCall, request)
      }
    }
  }

  @Test("BenchmarkService/UnaryCall with a negative response_size is INVALID_ARGUMENT")
  func negativeBenchmark() async throws {
    try await SimulatorHarness.with { harness in
      try await Self.expectRefused(.invalidArgument, harness) {
        _ = try await harness.channel.unary(
          Benchmark.unaryCall, GRPCTestingServicesTests.request(responseSize: Int32.min))
      }
    }
  }

  @Test("StreamingOutputCall with a negative size among its parameters is INVALID_ARGUMENT, before any response")
  func negativeStreaming() async throws {
    try await SimulatorHarness.with { harness in
      var request = GRPCTesting.StreamingOutputCallRequest()
      var good = GRPCTesting.ResponseParameters()
      good.size = 4
      var bad = GRPCTesting.ResponseParameters()
      bad.size = -1
      request.responseParameters = [good, bad]
      try await Self.expectRefused(.invalidArgument, harness) {
        let received = try await harness.channel.serverStreaming(Test.streamingOutputCall, request) {
          responses in
          var count = 0
          for try await _ in responses { count += 1 }
          return count
        }
        Issue.record("the call succeeded with \(received) responses")
      }
    }
  }

  @Test("a response_size of 1 GiB is RESOURCE_EXHAUSTED (above the 4 MiB send limit)")
  func oversized() async throws {
    try await SimulatorHarness.with { harness in
      try await Self.expectRefused(.resourceExhausted, harness) {
        _ = try await harness.channel.unary(
          Benchmark.unaryCall, GRPCTestingServicesTests.request(responseSize: 1 << 30))
      }
    }
  }
}
