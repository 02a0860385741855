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

  /// Serves the unary method at `path` with a handler that runs on the server's event loop
  /// with no task: called once the request has arrived, within the loop tick that brought it,
  /// and its response goes out in that tick's write. For a handler that answers at once from
  /// memory: it must neither block nor compute for long, since every connection of its loop
  /// waits while it runs. With interceptors (the server's or these), which are async code,
  /// each call runs as a task instead, as other handlers do.
  ///
  /// A method of its own name, not a `register(unary:)` overload: Swift would pick a
  /// synchronous overload for any trailing closure that does not `await`, and move existing
  /// handlers onto the loop unasked.
  public func registerOnLoop<Request, Response>(
    unary path: String, deserializer: some MessageDeserializer<Request>,
    serializer: some MessageSerializer<Response>, interceptors: [any ServerInterceptor] = [],
    _ handler: @escaping @Sendable (Request, ServerContext) throws -> Response
  ) {
    addOnLoop(path, interceptors) { stream, context in
      let request = try Self.onlyRequestOnLoop(stream, context, deserializer)
      let response = try handler(request, context)
      try stream.queueResponseOnLoop(compress: true) { try serializer.serialize(response, into: &$0) }
    } _: { stream, context in
      let request = try await Self.onlyRequest(stream, context, deserializer)
      let response = try handler(request, context)
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

  /// Serves a unary method of our protos on the event loop (see
  /// ``registerOnLoop(unary:deserializer:serializer:interceptors:_:)``).
  public func registerOnLoop<Request: ProtoMessage, Response: ProtoMessage>(
    unary method: ProtoMethod<Request, Response>, interceptors: [any ServerInterceptor] = [],
    _ handler: @escaping @Sendable (Request, ServerContext) throws -> Response
  ) {
    registerOnLoop(
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
    let bytes = try present(await stream.nextRequest())
    let compressed = context.lastRequestWasCompressed
    try absent(await stream.nextRequest())
    return try decode(bytes, compressed, deserializer)
  }

  /// ``onlyRequest(_:_:_:)`` on the loop, once the requests have ended.
  private static func onlyRequestOnLoop<Request>(
    _ stream: ServerStream, _ context: ServerContext, _ deserializer: some MessageDeserializer<Request>
  ) throws -> Request {
    let bytes = try present(stream.takeRequest())
    let compressed = context.lastRequestWasCompressed
    try absent(stream.takeRequest())
    return try decode(bytes, compressed, deserializer)
  }

  // doc/statuscodes.md: a request cardinality violation is UNIMPLEMENTED.
  private static func present(_ request: [UInt8]?) throws(RPCError) -> [UInt8] {
    guard let request else {
      throw RPCError(code: .unimplemented, message: "the call sent no request message")
    }
    return request
  }

  private static func absent(_ request: [UInt8]?) throws(RPCError) {
    guard request == nil else {
      throw RPCError(code: .unimplemented, message: "the call sent more than one request message")
    }
  }

  private static func decode<Request>(
    _ bytes: [UInt8], _ compressed: Bool, _ deserializer: some MessageDeserializer<Request>
  ) throws(RPCError) -> Request {
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
