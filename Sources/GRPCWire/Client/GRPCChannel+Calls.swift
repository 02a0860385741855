public import ProtoRuntime

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
    let interceptors = interceptors(of: options)
    if interceptors.isEmpty {
      var bytes: [UInt8] = []
      try frame(request, serializer, compress: options.compression != nil, into: &bytes)
      return try await unaryFramed(path: path, bytes, deserializer, options)
    }
    // Serialized here, framed once the interceptors have settled the compression: what goes
    // through them is Sendable.
    var message: [UInt8] = []
    do {
      try serializer.serialize(request, into: &message)
    } catch {
      throw RPCError(code: .internalError, message: "could not serialize the request: \(error)", cause: error)
    }
    let serialized = message
    return try await unary(path: path, options, interceptors, deserializer) { options in
      var bytes: [UInt8] = []
      try frame(serialized, RawBytesSerializer(), compress: options.compression != nil, into: &bytes)
      return bytes
    }
  }

  /// A unary call of a request framed once (``frame(_:compress:)``) and sent as it is: a call
  /// made again and again with the same request (a poll, a load tool) encodes it once, as a
  /// loop-driven one does (``startUnary(_:framedRequest:as:completion:)``).
  ///
  /// `framedRequest` is one gRPC message behind its 5-byte prefix, compressed only when
  /// `options.compression` names how; the call keeps the compression it was framed with,
  /// whatever interceptors make of the options. Throws ``RPCError`` as
  /// ``unary(path:request:serializer:deserializer:options:)`` does, and INTERNAL when
  /// `framedRequest` is not one such message. Runs on the caller's executor, as that does.
  nonisolated(nonsending) public func unary<Response: Sendable>(
    path: String, framedRequest: [UInt8], deserializer: some MessageDeserializer<Response>,
    options: CallOptions = CallOptions()
  ) async throws -> ClientResponse<Response> {
    try MessageFramer.check(framedRequest, compressionAllowed: options.compression != nil)
    let interceptors = interceptors(of: options)
    if interceptors.isEmpty {
      return try await unaryFramed(path: path, framedRequest, deserializer, options)
    }
    let compression = options.compression
    return try await unary(path: path, options, interceptors, deserializer) { options in
      options.compression = compression
      return framedRequest
    }
  }

  /// A unary call through `interceptors`; `framed` gives the framed request for the options
  /// they leave, and may change those.
  func unary<Response: Sendable>(
    path: String, _ options: CallOptions, _ interceptors: [any ClientInterceptor],
    _ deserializer: some MessageDeserializer<Response>,
    framed: @Sendable (inout CallOptions) throws -> [UInt8]
  ) async throws -> ClientResponse<Response> {
    var response: ClientResponse<Response>? = nil
    let summary = try await intercept(interceptors[...], clientCall(path, .unary, options)) { call in
      var options = call.options
      let bytes = try framed(&options)
      let made = try await unaryFramed(path: path, bytes, deserializer, options)
      response = made
      return ClientCallSummary(
        status: .ok, initialMetadata: made.initialMetadata, trailingMetadata: made.trailingMetadata,
        requestMessages: 1, responseMessages: 1)
    }
    return try Self.made(response, summary)
  }

  /// A unary call of a request already framed, without interceptors.
  nonisolated(nonsending) func unaryFramed<Response: Sendable>(
    path: String, _ framed: [UInt8], _ deserializer: some MessageDeserializer<Response>,
    _ options: CallOptions
  ) async throws -> ClientResponse<Response> {
    if let policies, let (policy, method) = policies.policy(for: path) {
      switch policy {
      case .retry(let retry):
        return try await unaryRetrying(path: path, framed, deserializer, options, retry, method, policies)
      case .hedging:
        // Hedged as a stream whose whole request is the replay.
        return try await withReplayedAttempts(
          path: path, initial: framed, finished: true, options, policy, method, policies,
          oneResponse: true
        ) { attempts in
          try await Self.response(of: attempts, deserializer)
        }.1
      }
    }
    let stream = try makeStream(
      path: path, options: options, firstRequest: framed, requestsFinished: true, oneResponse: true)
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
    try await intercepted(path, .serverStreaming, options) { options in
      var bytes: [UInt8] = []
      try frame(request, serializer, compress: options.compression != nil, into: &bytes)
      if let policies, let (policy, method) = policies.policy(for: path) {
        if case .retry(let retry) = policy {
          let (stream, result) = try await serverStreamingRetrying(
            path: path, bytes, options, retry, method, policies
          ) {
            try await body(ResponseStream(.stream($0), deserializer: deserializer))
          }
          return (.stream(stream), result)
        }
        let (attempts, result) = try await withReplayedAttempts(
          path: path, initial: bytes, finished: true, options, policy, method, policies,
          oneResponse: false
        ) { attempts in
          try await body(ResponseStream(.attempts(attempts), deserializer: deserializer))
        }
        return (.attempts(attempts), result)
      }
      let stream = try makeStream(
        path: path, options: options, firstRequest: bytes, requestsFinished: true, oneResponse: false)
      return (.stream(stream), try await run(stream) {
        try await body(ResponseStream(.stream(stream), deserializer: deserializer))
      })
    }
  }

  /// A client-streaming call: `body` writes the requests, then the one response is returned.
  /// Returning from `body` finishes the request stream.
  public func clientStreaming<Request, Response: Sendable>(
    path: String, serializer: some MessageSerializer<Request>,
    deserializer: some MessageDeserializer<Response>, options: CallOptions = CallOptions(),
    _ body: (RequestWriter<Request>) async throws -> Void
  ) async throws -> ClientResponse<Response> {
    try await intercepted(path, .clientStreaming, options) { options in
      if let policies, let (policy, method) = policies.policy(for: path) {
        let (attempts, response) = try await withReplayedAttempts(
          path: path, initial: [], finished: false, options, policy, method, policies,
          oneResponse: true
        ) { attempts in
          try await body(RequestWriter(.attempts(attempts), serializer: serializer, compression: options.compression))
          attempts.finishRequests()
          return try await Self.response(of: attempts, deserializer)
        }
        return (.attempts(attempts), response)
      }
      let stream = try makeStream(
        path: path, options: options, firstRequest: [], requestsFinished: false, oneResponse: true)
      return (.stream(stream), try await run(stream) {
        try await body(RequestWriter(.stream(stream), serializer: serializer, compression: options.compression))
        stream.finishRequests()
        let (messages, outcome, headMetadata) = await stream.awaitEnd()
        return try Self.single(messages, outcome, headMetadata, stream, deserializer)
      })
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
    try await intercepted(path, .bidirectionalStreaming, options) { options in
      if let policies, let (policy, method) = policies.policy(for: path) {
        let (attempts, result) = try await withReplayedAttempts(
          path: path, initial: [], finished: false, options, policy, method, policies,
          oneResponse: false
        ) { attempts in
          let result = try await body(
            RequestWriter(.attempts(attempts), serializer: serializer, compression: options.compression),
            ResponseStream(.attempts(attempts), deserializer: deserializer))
          attempts.finishRequests()
          return result
        }
        return (.attempts(attempts), result)
      }
      let stream = try makeStream(
        path: path, options: options, firstRequest: [], requestsFinished: false, oneResponse: false)
      return (.stream(stream), try await run(stream) {
        let result = try await body(
          RequestWriter(.stream(stream), serializer: serializer, compression: options.compression),
          ResponseStream(.stream(stream), deserializer: deserializer))
        stream.finishRequests()
        return result
      })
    }
  }

  // MARK: Interceptors

  /// The channel's interceptors, then the call's.
  func interceptors(of options: CallOptions) -> [any ClientInterceptor] {
    if options.interceptors.isEmpty { return self.options.interceptors }
    return self.options.interceptors + options.interceptors
  }

  private func clientCall(_ path: String, _ kind: CallKind, _ options: CallOptions) -> ClientCall {
    ClientCall(method: MethodDescriptor(path: path), kind: kind, target: target, options: options)
  }

  /// A streaming call through the interceptors, if there are any: `make` makes it with the
  /// options they leave and returns its stream (for the summary) and the caller's result.
  private func intercepted<Result>(
    _ path: String, _ kind: CallKind, _ options: CallOptions,
    _ make: (CallOptions) async throws -> (CallSource, Result)
  ) async throws -> Result {
    let interceptors = interceptors(of: options)
    if interceptors.isEmpty { return try await make(options).1 }
    var result: Result? = nil
    let summary = try await intercept(interceptors[...], clientCall(path, kind, options)) { call in
      let (source, made) = try await make(call.options)
      result = made
      return Self.summary(of: source, kind)
    }
    return try Self.made(result, summary)
  }

  /// What a streaming call reports to interceptors once the caller's body is done with it.
  private static func summary(of source: CallSource, _ kind: CallKind) -> ClientCallSummary {
    let stream: ClientStream
    var written: Int? = nil
    switch source {
    case .stream(let direct):
      stream = direct
    case .attempts(let attempts):
      // The committed attempt (else the last); the messages the caller wrote, whichever
      // attempts they went to.
      let summary = attempts.summary
      guard let last = summary.stream else {
        preconditionFailure("a call under a policy ended without an attempt")
      }
      stream = last
      written = summary.written
    }
    let progress = stream.progress
    let status: Status
    var trailers = Metadata()
    switch progress.outcome {
    case .success(let metadata)?:
      status = .ok
      trailers = metadata
    case .failure(let error)?:
      status = error.status
      trailers = error.metadata
    case nil:
      // `run` has just reset the stream; the reset's outcome is on its way.
      status = Status(code: .cancelled, message: "the caller stopped reading responses")
    }
    let oneRequest = kind == .unary || kind == .serverStreaming
    return ClientCallSummary(
      status: status, initialMetadata: progress.head ?? Metadata(), trailingMetadata: trailers,
      requestMessages: oneRequest ? 1 : written ?? progress.written,
      responseMessages: kind == .clientStreaming ? 1 : progress.delivered)
  }

  /// The caller's result once the interceptors returned `summary`: nil when one of them did
  /// not call `next`, which is then its status, or an error when it claims OK.
  private static func made<Result>(_ result: Result?, _ summary: ClientCallSummary) throws -> Result {
    if let result { return result }
    if !summary.status.isOK {
      throw RPCError(status: summary.status, metadata: summary.trailingMetadata)
    }
    throw RPCError(
      code: .internalError, message: "an interceptor returned OK without making the call")
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
  /// doc/statuscodes.md: a response cardinality violation is UNIMPLEMENTED, either way.
  static func cardinalityError(received count: Int, trailers: Metadata) -> RPCError {
    RPCError(
      code: .unimplemented,
      message: "a unary response must be exactly one message; the server sent \(count)",
      metadata: trailers)
  }

  /// The one response of a unary or client-streaming call under a policy, from the attempt it
  /// is committed to, once that ended.
  static func response<Response>(
    of attempts: StreamingAttempts, _ deserializer: some MessageDeserializer<Response>
  ) async throws -> ClientResponse<Response> {
    let stream = try await attempts.committedStream()
    let (messages, outcome, headMetadata) = await stream.awaitEnd()
    return try single(messages, outcome, headMetadata, stream, deserializer)
  }

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
      throw cardinalityError(received: messages.count, trailers: trailers)
    }
    // Decoded straight into the response: a `let` in between was copied (for a large message, a
    // retain and a release of every reference it holds).
    return ClientResponse(
      message: try ResponseDecoding.decode(messages[0], stream, deserializer),
      initialMetadata: headMetadata ?? Metadata(), trailingMetadata: trailers)
  }
}

extension GRPCChannel {
  /// A unary call of a method of our protos: `channel.unary(GRPCHealthV1.Health.check, request)`.
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
