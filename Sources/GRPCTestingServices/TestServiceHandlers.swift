internal import GRPCTestingProtos
public import GRPCWire

typealias Service = GRPCTesting.TestService

/// `grpc.testing.TestService` as interop-test-descriptions.md ("Server" section) prescribes:
/// every method, metadata echo (`x-grpc-test-echo-initial`, `x-grpc-test-echo-trailing-bin`),
/// requested statuses, compression checks.
///
/// Served by `interop-server` and, beside Fleet Engine, by `fleet-sim`; the handlers keep no
/// state between calls.
public enum TestServiceHandlers {
  /// Registers every TestService method on `server` (before it starts); with
  /// `unaryOnLoop`, the unary ones run on the server's event loop with no task
  /// (``GRPCServer/registerOnLoop(unary:interceptors:_:)``).
  public static func register(on server: GRPCServer, unaryOnLoop: Bool = false) {
    unary(Service.emptyCall, on: server, onLoop: unaryOnLoop) { _, context in
      echoMetadata(context)
      return GRPCTesting.Empty()
    }
    unary(Service.unaryCall, on: server, onLoop: unaryOnLoop) { request, context in
      echoMetadata(context)
      try checkCompression(request.expectCompressed, context)
      if let status = request.responseStatus, status.code != 0 { throw echoed(status) }
      context.setCompressResponses(request.responseCompressed?.value ?? false)
      var response = GRPCTesting.SimpleResponse()
      response.payload = payload(try PayloadSize.checked(request.responseSize, "response_size", context))
      return response
    }
    unary(Service.cacheableUnaryCall, on: server, onLoop: unaryOnLoop) { request, context in
      echoMetadata(context)
      var response = GRPCTesting.SimpleResponse()
      response.payload = payload(try PayloadSize.checked(request.responseSize, "response_size", context))
      return response
    }
    server.register(serverStreaming: Service.streamingOutputCall) { request, writer, context in
      echoMetadata(context)
      try await respond(to: request, writer, context)
    }
    server.register(clientStreaming: Service.streamingInputCall) { requests, context in
      echoMetadata(context)
      var total = 0
      for try await request in requests {
        try checkCompression(request.expectCompressed, context)
        total += request.payload?.body.count ?? 0
      }
      var response = GRPCTesting.StreamingInputCallResponse()
      response.aggregatedPayloadSize = Int32(total)
      return response
    }
    server.register(bidirectional: Service.fullDuplexCall) { requests, writer, context in
      echoMetadata(context)
      for try await request in requests { try await respond(to: request, writer, context) }
    }
    server.register(bidirectional: Service.halfDuplexCall) { requests, writer, context in
      echoMetadata(context)
      var all: [GRPCTesting.StreamingOutputCallRequest] = []
      for try await request in requests { all.append(request) }
      for request in all { try await respond(to: request, writer, context) }
    }
  }

  private static func unary<Request, Response>(
    _ method: ProtoMethod<Request, Response>, on server: GRPCServer, onLoop: Bool,
    _ handler: @escaping @Sendable (Request, ServerContext) throws -> Response
  ) {
    if onLoop {
      server.registerOnLoop(unary: method, handler)
    } else {
      server.register(unary: method) { request, context in try handler(request, context) }
    }
  }

  static func respond(
    to request: GRPCTesting.StreamingOutputCallRequest,
    _ writer: ResponseWriter<GRPCTesting.StreamingOutputCallResponse>, _ context: ServerContext
  ) async throws {
    if let status = request.responseStatus, status.code != 0 { throw echoed(status) }
    // Every size is checked before the first response goes out.
    let sizes = try request.responseParameters.map {
      try PayloadSize.checked($0.size, "response_parameters.size", context)
    }
    for (parameters, size) in zip(request.responseParameters, sizes) {
      if parameters.intervalUs > 0 {
        try await Task.sleep(for: .microseconds(Int(parameters.intervalUs)))
      }
      var response = GRPCTesting.StreamingOutputCallResponse()
      response.payload = payload(size)
      let compress = parameters.compressed?.value ?? false
      context.setCompressResponses(compress)
      try await writer.write(response, compress: compress)
    }
  }

  /// Echo Metadata: the initial value back in the response headers, the trailing one in the
  /// trailers.
  static func echoMetadata(_ context: ServerContext) {
    if let initial = context.requestMetadata.first("x-grpc-test-echo-initial") {
      var metadata = Metadata()
      metadata.add("x-grpc-test-echo-initial", initial)
      context.setInitialMetadata(metadata)
    }
    if let trailing = context.requestMetadata.firstBinary("x-grpc-test-echo-trailing-bin") {
      var metadata = Metadata()
      metadata.add("x-grpc-test-echo-trailing-bin", binary: trailing)
      context.setTrailingMetadata(metadata)
    }
  }

  /// CompressedRequest: the request must arrive compressed exactly when it says it expects to.
  static func checkCompression(_ expect: GRPCTesting.BoolValue?, _ context: ServerContext) throws {
    guard let expect else { return }
    if expect.value != context.lastRequestWasCompressed {
      throw RPCError(
        code: .invalidArgument,
        message: expect.value
          ? "expected a compressed request, got an uncompressed one"
          : "expected an uncompressed request, got a compressed one")
    }
  }

  static func echoed(_ status: GRPCTesting.EchoStatus) -> RPCError {
    RPCError(code: StatusCode(rawValue: Int(status.code)) ?? .unknown, message: status.message)
  }

  static func payload(_ size: Int) -> GRPCTesting.Payload {
    var payload = GRPCTesting.Payload()
    payload.body = zeros.value(size: size)
    return payload
  }

  /// Zero-filled bodies, shared by the calls that ask for the same size.
  static let zeros = RecentBySize { [UInt8](repeating: 0, count: $0) }
}
