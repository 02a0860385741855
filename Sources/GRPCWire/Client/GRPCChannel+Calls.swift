public import FleetProtos

extension GRPCChannel {
  /// A unary call: one request, one response.
  ///
  /// Throws ``RPCError``: the server's status when it is not OK, or a local failure (deadline,
  /// cancellation, connection, a response that is not gRPC, a message over the size limit).
  ///
  /// Runs on the caller's executor (`nonisolated(nonsending)`), the response is decoded there
  /// too: no executor switch on entry, which on a task that prefers the loop cost a lookup of
  /// the task's executor preference under its status lock, ~2% of a call's CPU per switch.
  nonisolated(nonsending) public func unary<Request, Response: Sendable>(
    path: String, request: Request, serializer: some MessageSerializer<Request>,
    deserializer: some MessageDeserializer<Response>, options: CallOptions = CallOptions()
  ) async throws -> ClientResponse<Response> {
    var bytes: [UInt8] = []
    try frame(request, serializer, compress: options.compression != nil, into: &bytes)
    let stream = try makeStream(
      path: path, options: options, firstRequest: bytes, requestsFinished: true, oneResponse: true)
    return try await run(stream) {
      let (messages, outcome, headMetadata) = await stream.awaitEnd()
      return try Self.single(messages, outcome, headMetadata, stream, deserializer)
    }
  }

  /// A server-streaming call: one request, then `body` reads the responses.
  ///
  /// The stream is reset (CANCEL) if `body` returns or throws before the responses end.
  public func serverStreaming<Request, Response: Sendable, Result>(
    path: String, request: Request, serializer: some MessageSerializer<Request>,
    deserializer: some MessageDeserializer<Response>, options: CallOptions = CallOptions(),
    _ body: (ResponseStream<Response>) async throws -> Result
  ) async throws -> Result {
    var bytes: [UInt8] = []
    try frame(request, serializer, compress: options.compression != nil, into: &bytes)
    let stream = try makeStream(
      path: path, options: options, firstRequest: bytes, requestsFinished: true, oneResponse: false)
    return try await run(stream) {
      try await body(ResponseStream(stream: stream, deserializer: deserializer))
    }
  }

  /// A client-streaming call: `body` writes the requests, then the one response is returned.
  /// Returning from `body` finishes the request stream.
  public func clientStreaming<Request, Response: Sendable>(
    path: String, serializer: some MessageSerializer<Request>,
    deserializer: some MessageDeserializer<Response>, options: CallOptions = CallOptions(),
    _ body: (RequestWriter<Request>) async throws -> Void
  ) async throws -> ClientResponse<Response> {
    let stream = try makeStream(
      path: path, options: options, firstRequest: [], requestsFinished: false, oneResponse: true)
    return try await run(stream) {
      try await body(RequestWriter(stream: stream, serializer: serializer, compression: options.compression))
      stream.finishRequests()
      let (messages, outcome, headMetadata) = await stream.awaitEnd()
      return try Self.single(messages, outcome, headMetadata, stream, deserializer)
    }
  }

  /// A bidirectional call: `body` gets a writer and the responses, usable concurrently (write
  /// from a child task while reading, or alternate). Returning from `body` finishes the
  /// request stream and, if responses are still coming, resets the call.
  public func bidirectionalStreaming<Request, Response: Sendable, Result>(
    path: String, serializer: some MessageSerializer<Request>,
    deserializer: some MessageDeserializer<Response>, options: CallOptions = CallOptions(),
    _ body: (RequestWriter<Request>, ResponseStream<Response>) async throws -> Result
  ) async throws -> Result {
    let stream = try makeStream(
      path: path, options: options, firstRequest: [], requestsFinished: false, oneResponse: false)
    return try await run(stream) {
      let result = try await body(
        RequestWriter(stream: stream, serializer: serializer, compression: options.compression),
        ResponseStream(stream: stream, deserializer: deserializer))
      stream.finishRequests()
      return result
    }
  }

  private func frame<Request>(
    _ request: Request, _ serializer: some MessageSerializer<Request>, compress: Bool,
    into bytes: inout [UInt8]
  ) throws(RPCError) {
    do {
      try MessageFramer.append(to: &bytes, compress: compress) { try serializer.serialize(request, into: &$0) }
    } catch {
      throw RPCError(code: .internalError, message: "could not serialize the request: \(error)", cause: error)
    }
  }

  /// The one response of a unary or client-streaming call.
  static func single<Response>(
    _ messages: [ClientStream.Received], _ outcome: CallOutcome, _ headMetadata: Metadata?,
    _ stream: ClientStream,
    _ deserializer: some MessageDeserializer<Response>
  ) throws -> ClientResponse<Response> {
    let trailers: Metadata
    switch outcome {
    case .failure(let error): throw error
    case .success(let metadata): trailers = metadata
    }
    guard messages.count == 1 else {
      // doc/statuscodes.md: a response cardinality violation is UNIMPLEMENTED, either way.
      throw RPCError(
        code: .unimplemented,
        message: "a unary response must be exactly one message; the server sent \(messages.count)",
        metadata: trailers)
    }
    // Decoded straight into the response: a `let` in between was copied (for a Trip, a retain
    // and a release of every reference it holds).
    return ClientResponse(
      message: try ResponseDecoding.decode(messages[0], stream, deserializer),
      initialMetadata: headMetadata ?? Metadata(), trailingMetadata: trailers)
  }
}

extension GRPCChannel {
  /// A unary call of a method of our protos: `channel.unary(FleetEngine.TripService.getTrip, request)`.
  /// Runs on the caller's executor, as the call it makes.
  nonisolated(nonsending) public func unary<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: ProtoMethod<Request, Response>, _ request: Request,
    options: CallOptions = CallOptions()
  ) async throws -> ClientResponse<Response> {
    try await unary(
      path: method.path, request: request, serializer: ProtoSerializer(),
      deserializer: ProtoDeserializer(), options: options)
  }

  /// A server-streaming call of a method of our protos.
  public func serverStreaming<Request: ProtoMessage, Response: ProtoMessage, Result>(
    _ method: ProtoMethod<Request, Response>, _ request: Request,
    options: CallOptions = CallOptions(),
    _ body: (ResponseStream<Response>) async throws -> Result
  ) async throws -> Result {
    try await serverStreaming(
      path: method.path, request: request, serializer: ProtoSerializer(),
      deserializer: ProtoDeserializer(), options: options, body)
  }

  /// A client-streaming call of a method of our protos.
  public func clientStreaming<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: ProtoMethod<Request, Response>, options: CallOptions = CallOptions(),
    _ body: (RequestWriter<Request>) async throws -> Void
  ) async throws -> ClientResponse<Response> {
    try await clientStreaming(
      path: method.path, serializer: ProtoSerializer(), deserializer: ProtoDeserializer(),
      options: options, body)
  }

  /// A bidirectional call of a method of our protos.
  public func bidirectionalStreaming<Request: ProtoMessage, Response: ProtoMessage, Result>(
    _ method: ProtoMethod<Request, Response>, options: CallOptions = CallOptions(),
    _ body: (RequestWriter<Request>, ResponseStream<Response>) async throws -> Result
  ) async throws -> Result {
    try await bidirectionalStreaming(
      path: method.path, serializer: ProtoSerializer(), deserializer: ProtoDeserializer(),
      options: options, body)
  }
}
