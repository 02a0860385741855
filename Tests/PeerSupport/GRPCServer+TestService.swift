internal import GRPCTestingProtos
public import GRPCWire

// grpc.testing's methods as the tests' own servers answer them, through public API only (the
// tests without package access use them too).
extension GRPCServer {
  /// Registers grpc.testing's UnaryCall as the tests' servers answer it: a payload of
  /// `response_size` bytes of `fill` — INVALID_ARGUMENT for a negative size — with no check of
  /// the size against any limit, so only the server's own limits stand in the way.
  public func registerUnaryPayload(fill: UInt8 = 0) {
    register(unary: GRPCTesting.TestService.unaryCall) { request, _ in
      if request.responseSize < 0 { throw RPCError(code: .invalidArgument, message: "negative") }
      var response = GRPCTesting.SimpleResponse()
      var payload = GRPCTesting.Payload()
      payload.body = [UInt8](repeating: fill, count: Int(request.responseSize))
      response.payload = payload
      return response
    }
  }

  /// Registers grpc.testing's StreamingOutputCall as the tests' servers answer it: one response
  /// per response parameter, each `interval_us` after the one before, carrying a payload of
  /// `size` zero bytes — or, without `payloads`, an empty response.
  public func registerStreamingOutput(payloads: Bool = true) {
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
