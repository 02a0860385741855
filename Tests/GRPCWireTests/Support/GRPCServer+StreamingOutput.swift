import GRPCTestingProtos

@testable import GRPCWire

extension GRPCServer {
  /// Registers grpc.testing's StreamingOutputCall as the tests' servers answer it: one response
  /// per response parameter, each `interval_us` after the one before, carrying a payload of
  /// `size` zero bytes — or, without `payloads`, an empty response.
  func registerStreamingOutput(payloads: Bool = true) {
    register(serverStreaming: GRPCTesting.TestService.streamingOutputCall) { request, writer, _ in
      for parameters in request.responseParameters {
        try await Task.sleep(for: .microseconds(Int(parameters.intervalUs)))
        var response = GRPCTesting.StreamingOutputCallResponse()
        if payloads {
          var payload = GRPCTesting.Payload()
          payload.body = [UInt8](repeating: 0, count: Int(parameters.size))
          response.payload = payload
        }
        try await writer.write(response)
      }
    }
  }
}
