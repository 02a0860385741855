internal import GRPCTestingProtos
public import GRPCWire

/// `grpc.testing.BenchmarkService` (gRPC's benchmark_service.proto), the load target of
/// `fleet-load` and of other gRPC benchmark clients.
///
/// Every method answers a `SimpleRequest` with a `SimpleResponse` whose payload is
/// `response_size` zero bytes:
/// - `UnaryCall`: one response per call.
/// - `StreamingCall`: ping-pong, one response per request, until the client finishes.
/// - `StreamingFromClient`: reads every request, then answers once (the last request's size).
/// - `StreamingFromServer`: answers the one request with responses sent continuously until
///   the client cancels; the response is encoded once and only copied per message, and each
///   write waits while the client's flow-control window is shut.
/// - `StreamingBothWays`: responses sent continuously, as StreamingFromServer, sized by the
///   first request, while the client's requests are read and dropped.
public enum BenchmarkServiceHandlers {
  typealias Methods = GRPCTesting.BenchmarkService

  /// Registers every BenchmarkService method on `server` (before it starts).
  public static func register(on server: GRPCServer) {
    server.register(unary: Methods.unaryCall) { request, context in
      try response(size: request.responseSize, context)
    }
    server.register(bidirectional: Methods.streamingCall) { requests, writer, context in
      for try await request in requests {
        try await writer.write(response(size: request.responseSize, context), compress: false)
      }
    }
    server.register(clientStreaming: Methods.streamingFromClient) { requests, context in
      var size: Int32 = 0
      for try await request in requests { size = request.responseSize }
      return try response(size: size, context)
    }
    server.register(serverStreaming: encoded(Methods.streamingFromServer)) {
      request, writer, context in
      try await writeForever(encoded(size: request.responseSize, context), writer)
    }
    server.register(bidirectional: encoded(Methods.streamingBothWays)) { requests, writer, context in
      try await withThrowingTaskGroup(of: Void.self) { group in
        var writing = false
        for try await request in requests where !writing {
          let message = try encoded(size: request.responseSize, context)
          group.addTask { try await writeForever(message, writer) }
          writing = true
        }
        // The client finishing its requests does not end the responses; its cancel does.
        try await group.waitForAll()
      }
    }
  }

  /// `method` answering with pre-encoded responses.
  private static func encoded<Request>(_ method: ProtoMethod<Request, GRPCTesting.SimpleResponse>)
    -> ProtoMethod<Request, EncodedMessage>
  {
    // Kind is nested in the generic type: each specialisation has its own.
    let kind: ProtoMethod<Request, EncodedMessage>.Kind
    switch method.kind {
    case .unary: kind = .unary
    case .serverStreaming: kind = .serverStreaming
    case .clientStreaming: kind = .clientStreaming
    case .bidirectionalStreaming: kind = .bidirectionalStreaming
    }
    return ProtoMethod(path: method.path, kind: kind)
  }

  /// Writes `message` until the client goes away (the write then throws CANCELLED).
  ///
  /// On the server's event loop, where handlers start: the writer gives way to the loop
  /// whenever 64 KiB wait unsent, so the socket is flushed while this writes.
  private static func writeForever(
    _ message: EncodedMessage, _ writer: ResponseWriter<EncodedMessage>
  ) async throws {
    while !Task.isCancelled {
      try await writer.write(message, compress: false)
    }
  }

  /// The encoded response of `size` zero bytes, shared by the streams that ask for that size.
  static func encoded(size: Int32, _ context: ServerContext) throws(RPCError) -> EncodedMessage {
    let checked = try PayloadSize.checked(size, "response_size", context)
    return encodedResponses.value(size: checked)
  }

  private static let encodedResponses = RecentBySize { EncodedMessage(zeroResponse($0)) }

  /// A response with `size` zero bytes of payload, once `size` passed ``PayloadSize``.
  static func response(size: Int32, _ context: ServerContext) throws(RPCError) -> GRPCTesting.SimpleResponse {
    zeroResponse(try PayloadSize.checked(size, "response_size", context))
  }

  private static func zeroResponse(_ size: Int) -> GRPCTesting.SimpleResponse {
    var response = GRPCTesting.SimpleResponse()
    if size > 0 { response.payload = TestServiceHandlers.payload(size) }
    return response
  }
}
