internal import GRPCTestingProtos
internal import GRPCWire

/// `grpc.testing.TestService` on the generated `ServiceProtocol`, as interop-test-descriptions.md
/// ("Server" section) prescribes (see ``TestServiceHandlers``). `UnimplementedCall` is left out
/// on purpose: the protocol's default answers it UNIMPLEMENTED, as the interop case
/// `unimplemented_method` expects.
struct TestServiceImplementation: GRPCTesting.TestService.ServiceProtocol {
  typealias Handlers = TestServiceHandlers

  func emptyCall(
    _ request: GRPCTesting.Empty, context: ServerContext
  ) async throws -> GRPCTesting.Empty {
    Handlers.emptyCall(request, context)
  }

  func unaryCall(
    _ request: GRPCTesting.SimpleRequest, context: ServerContext
  ) async throws -> GRPCTesting.SimpleResponse {
    try Handlers.unaryCall(request, context)
  }

  func cacheableUnaryCall(
    _ request: GRPCTesting.SimpleRequest, context: ServerContext
  ) async throws -> GRPCTesting.SimpleResponse {
    try Handlers.cacheableUnaryCall(request, context)
  }

  func streamingOutputCall(
    _ request: GRPCTesting.StreamingOutputCallRequest,
    responses: ResponseWriter<GRPCTesting.StreamingOutputCallResponse>, context: ServerContext
  ) async throws {
    Handlers.echoMetadata(context)
    try await Handlers.respond(to: request, responses, context)
  }

  func streamingInputCall(
    _ requests: RequestStream<GRPCTesting.StreamingInputCallRequest>, context: ServerContext
  ) async throws -> GRPCTesting.StreamingInputCallResponse {
    Handlers.echoMetadata(context)
    var total = 0
    for try await request in requests {
      try Handlers.checkCompression(request.expectCompressed, context)
      total += request.payload?.body.count ?? 0
    }
    var response = GRPCTesting.StreamingInputCallResponse()
    response.aggregatedPayloadSize = Int32(total)
    return response
  }

  func fullDuplexCall(
    _ requests: RequestStream<GRPCTesting.StreamingOutputCallRequest>,
    responses: ResponseWriter<GRPCTesting.StreamingOutputCallResponse>, context: ServerContext
  ) async throws {
    Handlers.echoMetadata(context)
    for try await request in requests {
      try await Handlers.respond(to: request, responses, context)
    }
  }

  func halfDuplexCall(
    _ requests: RequestStream<GRPCTesting.StreamingOutputCallRequest>,
    responses: ResponseWriter<GRPCTesting.StreamingOutputCallResponse>, context: ServerContext
  ) async throws {
    Handlers.echoMetadata(context)
    var all: [GRPCTesting.StreamingOutputCallRequest] = []
    for try await request in requests { all.append(request) }
    for request in all { try await Handlers.respond(to: request, responses, context) }
  }
}
