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
  /// Registers every TestService method on `server` (before it starts), through the generated
  /// `GRPCServer.register(_:)` of ``TestServiceImplementation``; with `unaryOnLoop`, the unary
  /// ones then run on the server's event loop with no task
  /// (``GRPCServer/registerOnLoop(unary:interceptors:_:)``, which replaces their registration).
  public static func register(on server: GRPCServer, unaryOnLoop: Bool = false) {
    server.register(TestServiceImplementation())
    if unaryOnLoop {
      server.registerOnLoop(unary: Service.emptyCall, emptyCall)
      server.registerOnLoop(unary: Service.unaryCall, unaryCall)
      server.registerOnLoop(unary: Service.cacheableUnaryCall, cacheableUnaryCall)
    }
  }

  // The unary handlers, synchronous so that they also run on the loop.

  static func emptyCall(_ request: GRPCTesting.Empty, _ context: ServerContext) -> GRPCTesting.Empty
  {
    echoMetadata(context)
    return GRPCTesting.Empty()
  }

  static func unaryCall(
    _ request: GRPCTesting.SimpleRequest, _ context: ServerContext
  ) throws -> GRPCTesting.SimpleResponse {
    echoMetadata(context)
    try checkCompression(request.expectCompressed, context)
    if let status = request.responseStatus, status.code != 0 { throw echoed(status) }
    context.setCompressResponses(request.responseCompressed?.value ?? false)
    var response = GRPCTesting.SimpleResponse()
    response.payload = payload(
      try PayloadSize.checked(request.responseSize, "response_size", context))
    return response
  }

  static func cacheableUnaryCall(
    _ request: GRPCTesting.SimpleRequest, _ context: ServerContext
  ) throws -> GRPCTesting.SimpleResponse {
    echoMetadata(context)
    var response = GRPCTesting.SimpleResponse()
    response.payload = payload(
      try PayloadSize.checked(request.responseSize, "response_size", context))
    return response
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
