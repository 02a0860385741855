public import ProtoRuntime

// Handlers of the four kinds: for any message types, given how to read requests and write
// responses (``MessageDeserializer``, ``MessageSerializer``: raw bytes, swift-protobuf
// through an adapter, JSON…), and for our protos (``ProtoMethod``).

extension GRPCServer {
  /// Serves the unary method at `path` (`/package.Service/Method`).
  public func register<Request, Response>(
    unary path: String, deserializer: some MessageDeserializer<Request>,
    serializer: some MessageSerializer<Response>, interceptors: [any ServerInterceptor] = [],
    _ handler: @escaping @Sendable (Request, ServerContext) async throws -> Response
  ) {
    add(path, interceptors) { stream, context in
      let request = try await Self.onlyRequest(stream, context, deserializer)
      let response = try await handler(request, context)
      try await stream.writeResponse(compress: true) { try serializer.serialize(response, into: &$0) }
    }
  }

  /// Serves the server-streaming method at `path`.
  public func register<Request, Response>(
    serverStreaming path: String, deserializer: some MessageDeserializer<Request>,
    serializer: some MessageSerializer<Response>, interceptors: [any ServerInterceptor] = [],
    _ handler: @escaping @Sendable (Request, ResponseWriter<Response>, ServerContext) async throws -> Void
  ) {
    add(path, interceptors) { stream, context in
      let request = try await Self.onlyRequest(stream, context, deserializer)
      try await handler(request, Self.writer(stream, serializer), context)
    }
  }

  /// Serves the client-streaming method at `path`.
  public func register<Request: Sendable, Response>(
    clientStreaming path: String, deserializer: some MessageDeserializer<Request>,
    serializer: some MessageSerializer<Response>, interceptors: [any ServerInterceptor] = [],
    _ handler: @escaping @Sendable (RequestStream<Request>, ServerContext) async throws -> Response
  ) {
    add(path, interceptors) { stream, context in
      let response = try await handler(Self.requests(stream, context, deserializer), context)
      try await stream.writeResponse(compress: true) { try serializer.serialize(response, into: &$0) }
    }
  }

  /// Serves the bidirectional method at `path`.
  public func register<Request: Sendable, Response>(
    bidirectional path: String, deserializer: some MessageDeserializer<Request>,
    serializer: some MessageSerializer<Response>, interceptors: [any ServerInterceptor] = [],
    _ handler: @escaping @Sendable (RequestStream<Request>, ResponseWriter<Response>, ServerContext) async throws -> Void
  ) {
    add(path, interceptors) { stream, context in
      try await handler(
        Self.requests(stream, context, deserializer), Self.writer(stream, serializer), context)
    }
  }

  // MARK: Our protos

  /// Serves a unary method of our protos.
  public func register<Request: ProtoMessage, Response: ProtoMessage>(
    unary method: ProtoMethod<Request, Response>, interceptors: [any ServerInterceptor] = [],
    _ handler: @escaping @Sendable (Request, ServerContext) async throws -> Response
  ) {
    register(
      unary: method.path, deserializer: ProtoDeserializer(), serializer: ProtoSerializer(),
      interceptors: interceptors, handler)
  }

  /// Serves a server-streaming method of our protos.
  public func register<Request: ProtoMessage, Response: ProtoMessage>(
    serverStreaming method: ProtoMethod<Request, Response>, interceptors: [any ServerInterceptor] = [],
    _ handler: @escaping @Sendable (Request, ResponseWriter<Response>, ServerContext) async throws -> Void
  ) {
    register(
      serverStreaming: method.path, deserializer: ProtoDeserializer(), serializer: ProtoSerializer(),
      interceptors: interceptors, handler)
  }

  /// Serves a client-streaming method of our protos.
  public func register<Request: ProtoMessage, Response: ProtoMessage>(
    clientStreaming method: ProtoMethod<Request, Response>, interceptors: [any ServerInterceptor] = [],
    _ handler: @escaping @Sendable (RequestStream<Request>, ServerContext) async throws -> Response
  ) {
    register(
      clientStreaming: method.path, deserializer: ProtoDeserializer(), serializer: ProtoSerializer(),
      interceptors: interceptors, handler)
  }

  /// Serves a bidirectional method of our protos.
  public func register<Request: ProtoMessage, Response: ProtoMessage>(
    bidirectional method: ProtoMethod<Request, Response>, interceptors: [any ServerInterceptor] = [],
    _ handler: @escaping @Sendable (RequestStream<Request>, ResponseWriter<Response>, ServerContext) async throws -> Void
  ) {
    register(
      bidirectional: method.path, deserializer: ProtoDeserializer(), serializer: ProtoSerializer(),
      interceptors: interceptors, handler)
  }

  // MARK: Reading and writing

  /// The one request of a unary or server-streaming call.
  private static func onlyRequest<Request>(
    _ stream: ServerStream, _ context: ServerContext, _ deserializer: some MessageDeserializer<Request>
  ) async throws -> Request {
    // doc/statuscodes.md: a request cardinality violation is UNIMPLEMENTED.
    guard let bytes = try await stream.nextRequest() else {
      throw RPCError(code: .unimplemented, message: "the call sent no request message")
    }
    let compressed = context.lastRequestWasCompressed
    guard try await stream.nextRequest() == nil else {
      throw RPCError(code: .unimplemented, message: "the call sent more than one request message")
    }
    do {
      return try deserializer.deserialize(ReceivedMessage(bytes: bytes, wasCompressed: compressed))
    } catch {
      throw RPCError(code: .internalError, message: "could not decode the request: \(error)")
    }
  }

  private static func requests<Request: Sendable>(
    _ stream: ServerStream, _ context: ServerContext, _ deserializer: some MessageDeserializer<Request>
  ) -> RequestStream<Request> {
    RequestStream(stream: stream) { bytes in
      try deserializer.deserialize(
        ReceivedMessage(bytes: bytes, wasCompressed: context.lastRequestWasCompressed))
    }
  }

  private static func writer<Response>(
    _ stream: ServerStream, _ serializer: some MessageSerializer<Response>
  ) -> ResponseWriter<Response> {
    ResponseWriter(stream: stream) { message, buffer in try serializer.serialize(message, into: &buffer) }
  }
}
