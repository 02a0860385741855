import GRPCTestingProtos
import GRPCWire
import Testing

/// The simulator serves gRPC's benchmark and test services beside Fleet Engine, with no
/// token, as load targets.
@Suite("Simulator: grpc.testing services")
struct GRPCTestingServicesTests {
  typealias Benchmark = GRPCTesting.BenchmarkService

  static func request(responseSize: Int32, payload: Int = 0) -> GRPCTesting.SimpleRequest {
    var request = GRPCTesting.SimpleRequest()
    request.responseSize = responseSize
    if payload > 0 {
      var body = GRPCTesting.Payload()
      body.body = [UInt8](repeating: 7, count: payload)
      request.payload = body
    }
    return request
  }

  @Test("BenchmarkService/UnaryCall answers response_size bytes, with no token")
  func unaryCall() async throws {
    try await SimulatorHarness.with { harness in
      let response = try await harness.channel.unary(
        Benchmark.unaryCall, Self.request(responseSize: 64, payload: 16)
      ).message
      #expect(response.payload?.body.count == 64)
    }
  }

  @Test("BenchmarkService/StreamingCall answers each request in turn (ping-pong)")
  func streamingCall() async throws {
    try await SimulatorHarness.with { harness in
      let sizes = try await harness.channel.bidirectionalStreaming(Benchmark.streamingCall) {
        writer, responses in
        var iterator = responses.makeAsyncIterator()
        var sizes: [Int] = []
        for size in [1, 10, 100] as [Int32] {
          try await writer.write(Self.request(responseSize: size))
          sizes.append(try await iterator.next()?.payload?.body.count ?? -1)
        }
        writer.finish()
        return sizes
      }
      #expect(sizes == [1, 10, 100])
    }
  }

  @Test("BenchmarkService/StreamingFromServer streams until the client cancels; then serves on")
  func streamingFromServer() async throws {
    try await SimulatorHarness.with { harness in
      let count = try await harness.channel.serverStreaming(
        Benchmark.streamingFromServer, Self.request(responseSize: 64)
      ) { responses in
        var count = 0
        for try await response in responses {
          #expect(response.payload?.body.count == 64)
          count += 1
          if count == 10_000 { break }
        }
        return count
      }
      #expect(count == 10_000)
      // The cancelled stream's handler ended; the server still answers.
      let response = try await harness.channel.unary(
        Benchmark.unaryCall, Self.request(responseSize: 3))
      #expect(response.message.payload?.body.count == 3)
    }
  }

  @Test("BenchmarkService/StreamingFromClient answers once, after the last request")
  func streamingFromClient() async throws {
    try await SimulatorHarness.with { harness in
      let response = try await harness.channel.clientStreaming(Benchmark.streamingFromClient) {
        writer in
        for size in [5, 6, 9] as [Int32] {
          try await writer.write(Self.request(responseSize: size))
        }
      }
      #expect(response.message.payload?.body.count == 9)
    }
  }

  @Test("BenchmarkService/StreamingBothWays streams responses while taking requests")
  func streamingBothWays() async throws {
    try await SimulatorHarness.with { harness in
      let count = try await harness.channel.bidirectionalStreaming(Benchmark.streamingBothWays) {
        writer, responses in
        try await writer.write(Self.request(responseSize: 8))
        var count = 0
        for try await _ in responses {
          count += 1
          if count == 100 { break }
          if count == 50 { try await writer.write(Self.request(responseSize: 8)) }
        }
        return count
      }
      #expect(count == 100)
    }
  }

  @Test("TestService: EmptyCall, UnaryCall with the metadata echo, StreamingOutputCall")
  func testService() async throws {
    try await SimulatorHarness.with { harness in
      _ = try await harness.channel.unary(GRPCTesting.TestService.emptyCall, GRPCTesting.Empty())
      var metadata = Metadata()
      metadata.add("x-grpc-test-echo-initial", "hello")
      let unary = try await harness.channel.unary(
        GRPCTesting.TestService.unaryCall, Self.request(responseSize: 12),
        options: CallOptions(metadata: metadata))
      #expect(unary.message.payload?.body.count == 12)
      #expect(unary.initialMetadata.first("x-grpc-test-echo-initial") == "hello")
      var request = GRPCTesting.StreamingOutputCallRequest()
      request.responseParameters = ([3, 4, 5] as [Int32]).map { size in
        var parameters = GRPCTesting.ResponseParameters()
        parameters.size = size
        return parameters
      }
      let sizes = try await harness.channel.serverStreaming(
        GRPCTesting.TestService.streamingOutputCall, request
      ) { responses in
        var sizes: [Int] = []
        for try await response in responses { sizes.append(response.payload?.body.count ?? -1) }
        return sizes
      }
      #expect(sizes == [3, 4, 5])
    }
  }
}
