package import ProtoRuntime

/// A call driven by its channel's event loop with no task waiting on it: started on the loop
/// thread, its results arrive as callbacks on that thread.
///
/// For code that keeps many calls going from state machines owned by the loop (a poller that
/// calls once a second and holds nothing between calls): no task, continuation or
/// executor hop per call. Callbacks run outside nghttp2's callbacks, so they may start or
/// cancel calls; they must not block, as they share the thread with every socket of the loop.
///
/// With interceptors (``ChannelOptions/interceptors``, ``CallOptions/interceptors``), which
/// are async code, the call runs in a task that prefers the loop; its callbacks still run on
/// the loop thread.
package final class LoopCall: Sendable {
  private enum Driver {
    case stream(ClientStream)
    case task(Task<Void, Never>)
  }

  private let driver: Driver

  fileprivate init(stream: ClientStream) {
    driver = .stream(stream)
  }

  fileprivate init(task: Task<Void, Never>) {
    driver = .task(task)
  }

  /// Ends the call with CANCELLED (resetting its stream) unless it is already over; its
  /// end callback then reports that. Callable from any thread.
  package func cancel() {
    switch driver {
    case .stream(let stream):
      stream.cancel(RPCError(code: .cancelled, message: "the call was cancelled by its owner"))
    case .task(let task):
      task.cancel()
    }
  }
}

/// Receives a loop-driven stream's messages and end, on its loop, outside nghttp2's callbacks.
protocol ClientStreamObserver: AnyObject, Sendable {
  /// Whether messages go to ``received(_:from:)`` as they arrive (a streaming call) rather
  /// than staying in the stream for its end (a unary call).
  var streamsMessages: Bool { get }
  /// One complete response message; called in order, only when `streamsMessages`.
  func received(_ message: ClientStream.Received, from stream: ClientStream)
  /// The call is over: its outcome is set. Called once, after every message.
  func ended(_ stream: ClientStream)
}

extension GRPCChannel {
  /// Starts a unary call of `method` from the loop thread (``eventLoop``); `completion` runs
  /// on the loop once the call is over, with the response or the call's ``RPCError``.
  ///
  /// Throws, and starts nothing, when the call cannot be made at all (a closed channel,
  /// invalid metadata, credentials over plaintext to another host): what ``unary(_:_:options:)``
  /// would throw at once.
  package func startUnary<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions,
    completion: @escaping @Sendable (Result<Response, RPCError>) -> Void
  ) throws(RPCError) -> LoopCall {
    try startUnary(
      prepare(path: method.path, options: options),
      framedRequest: Self.frame(request, compress: options.compression != nil),
      as: Response.self, completion: completion)
  }

  /// Starts a unary call `prepared` describes, from the loop thread, with a request already
  /// framed (``MessageFramer``'s 5-byte prefix, then the message): for a call repeated with
  /// the same request, which is then encoded once. `completion` runs on the loop.
  package func startUnary<Response: ProtoMessage>(
    _ prepared: PreparedCall, framedRequest: [UInt8], as response: Response.Type,
    completion: @escaping @Sendable (Result<Response, RPCError>) -> Void
  ) throws(RPCError) -> LoopCall {
    if let interception = prepared.interception {
      return LoopCall(task: Task(executorPreference: loop) { [self] in
        let result: Result<Response, RPCError>
        do {
          result = .success(
            try await unary(
              path: interception.path, interception.options, interception.interceptors,
              ProtoDeserializer<Response>()
            ) { options in
              // Framed already: the call keeps the compression it was framed with.
              options.compression = interception.options.compression
              return framedRequest
            }.message)
        } catch {
          result = .failure(RPCError.local(error))
        }
        completion(result)
      })
    }
    let stream = try makeLoopStream(prepared, framedRequest, oneResponse: true)
    stream.observer = UnaryObserver<Response>(completion: completion)
    return start(stream)
  }

  /// `request` framed as a gRPC message (gzip-compressed when `compress`), for
  /// ``startUnary(_:framedRequest:as:completion:)``.
  package static func frame(_ request: some ProtoMessage, compress: Bool = false) -> [UInt8] {
    var bytes: [UInt8] = []
    MessageFramer.append(to: &bytes, compress: compress) {
      ProtoSerializer().serialize(request, into: &$0)
    }
    return bytes
  }

  /// Starts a server-streaming call of `method` from the loop thread: `onMessage` gets each
  /// response in order, then `onEnd` the outcome (nil for OK), all on the loop. A response
  /// that cannot be decoded ends the call with that error.
  package func startServerStreaming<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions,
    onMessage: @escaping @Sendable (Response) -> Void,
    onEnd: @escaping @Sendable (RPCError?) -> Void
  ) throws(RPCError) -> LoopCall {
    try startServerStreaming(
      method, request, prepared: prepare(path: method.path, options: options),
      compress: options.compression != nil, onMessage: onMessage, onEnd: onEnd)
  }

  /// ``startServerStreaming(_:_:options:onMessage:onEnd:)`` with the call already prepared
  /// (``prepare(path:options:)`` for `method`'s path), so that calls with the same options
  /// share their header fields; `compress` must match the options' compression.
  package func startServerStreaming<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: ProtoMethod<Request, Response>, _ request: Request, prepared: PreparedCall,
    compress: Bool = false,
    onMessage: @escaping @Sendable (Response) -> Void,
    onEnd: @escaping @Sendable (RPCError?) -> Void
  ) throws(RPCError) -> LoopCall {
    if let interception = prepared.interception {
      return LoopCall(task: Task(executorPreference: loop) { [self] in
        do {
          try await serverStreaming(method, request, options: interception.options) { responses in
            for try await response in responses { onMessage(response) }
          }
          onEnd(nil)
        } catch {
          onEnd(RPCError.local(error))
        }
      })
    }
    let stream = try makeLoopStream(
      prepared, Self.frame(request, compress: compress), oneResponse: false)
    stream.observer = StreamingObserver<Response>(onMessage: onMessage, onEnd: onEnd)
    return start(stream)
  }

  /// The stream of a loop-driven call, refused when its deadline has already passed.
  private func makeLoopStream(_ prepared: PreparedCall, _ framedRequest: [UInt8], oneResponse: Bool)
    throws(RPCError) -> ClientStream
  {
    loop.assertInLoop()
    if let timeout = prepared.timeout, timeout <= .zero {
      throw RPCError(
        code: .deadlineExceeded, message: "the call's deadline had passed before it started")
    }
    return try makeStream(prepared, framedRequest, true, oneResponse: oneResponse)
  }

  private func start(_ stream: ClientStream) -> LoopCall {
    stream.pool = pool
    pool.start(stream)
    return LoopCall(stream: stream)
  }
}

/// A loop-driven unary call's end: the one response decoded, or the error.
private final class UnaryObserver<Response: ProtoMessage>: ClientStreamObserver {
  let completion: @Sendable (Result<Response, RPCError>) -> Void

  init(completion: @escaping @Sendable (Result<Response, RPCError>) -> Void) {
    self.completion = completion
  }

  var streamsMessages: Bool { false }

  func received(_ message: ClientStream.Received, from stream: ClientStream) {}

  func ended(_ stream: ClientStream) {
    let (messages, outcome, headMetadata) = stream.takeEnd()
    let result: Result<Response, RPCError>
    do {
      result = .success(
        try GRPCChannel.single(
          messages, outcome, headMetadata, stream, ProtoDeserializer<Response>()
        )
        .message)
    } catch let error as RPCError {
      result = .failure(error)
    } catch {
      result = .failure(RPCError(code: .internalError, message: "\(error)", cause: error))
    }
    completion(result)
  }
}

/// A loop-driven server-streaming call: each response decoded in turn, then the end.
private final class StreamingObserver<Response: ProtoMessage>: ClientStreamObserver,
  @unchecked Sendable
{
  // @unchecked Sendable: `failed` is only touched on the stream's loop.
  let onMessage: @Sendable (Response) -> Void
  let onEnd: @Sendable (RPCError?) -> Void
  /// A message could not be decoded: the call is being ended with that error, and messages
  /// already on their way are dropped.
  private var failed = false

  init(
    onMessage: @escaping @Sendable (Response) -> Void,
    onEnd: @escaping @Sendable (RPCError?) -> Void
  ) {
    self.onMessage = onMessage
    self.onEnd = onEnd
  }

  var streamsMessages: Bool { true }

  func received(_ message: ClientStream.Received, from stream: ClientStream) {
    guard !failed else { return }
    do {
      onMessage(try ResponseDecoding.decode(message, stream, ProtoDeserializer<Response>()))
    } catch {
      // ResponseDecoding has cancelled the stream with this error; `ended` reports it.
      failed = true
    }
  }

  func ended(_ stream: ClientStream) {
    switch stream.takeEnd().outcome {
    case .success: onEnd(nil)
    case .failure(let error): onEnd(error)
    }
  }
}
