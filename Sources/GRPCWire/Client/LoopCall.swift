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
///
/// A value: copies are handles to the same call (a struct, so starting a call allocates no
/// handle of its own).
package struct LoopCall: Sendable {
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

/// Receives a loop-driven streaming call's messages as they arrive, and its end, on its
/// loop, outside nghttp2's callbacks. (A unary call has a ``UnaryCallReceiver`` instead.)
protocol ClientStreamObserver: AnyObject, Sendable {
  /// One complete response message; called in order.
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
    try startUnary(
      prepared, framedRequest: framedRequest, deserializer: ProtoDeserializer<Response>(),
      completion: completion)
  }

  /// ``startUnary(_:framedRequest:as:completion:)`` with the response read by
  /// `deserializer`, on the loop, as the call ends; what it throws fails the call with
  /// INTERNAL, as a response that does not decode does.
  package func startUnary<Deserializer: MessageDeserializer>(
    _ prepared: PreparedCall, framedRequest: [UInt8], deserializer: Deserializer,
    completion: @escaping @Sendable (Result<Deserializer.Message, RPCError>) -> Void
  ) throws(RPCError) -> LoopCall where Deserializer.Message: Sendable {
    if let interception = prepared.interception {
      return LoopCall(task: Task(executorPreference: loop) { [self] in
        let result: Result<Deserializer.Message, RPCError>
        do {
          result = .success(
            try await unary(
              path: interception.path, interception.options, interception.interceptors,
              deserializer
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
    return try startUnary(
      prepared, framedRequest: framedRequest,
      receiver: ClosureUnaryReceiver(deserializer: deserializer, completion: completion))
  }

  /// ``startUnary(_:framedRequest:deserializer:completion:)`` reporting to `receiver`, which
  /// the call holds until it ends: the response read by its deserializer, on the loop, then
  /// the result. For a caller that makes the same call again and again (a poller), one
  /// object holds what the call needs to know, where a deserializer and a closure take two
  /// allocations.
  package func startUnary(
    _ prepared: PreparedCall, framedRequest: [UInt8], receiver: some UnaryCallReceiver
  ) throws(RPCError) -> LoopCall {
    if prepared.interception != nil {
      return try startUnary(
        prepared, framedRequest: framedRequest, deserializer: PassThroughDeserializer(),
        completion: { receiver.ended($0) })
    }
    let stream = try makeLoopStream(prepared, framedRequest, oneResponse: true)
    stream.unaryReceiver = receiver
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
    try startServerStreaming(
      method, request, prepared: prepared, compress: compress,
      deserializer: ProtoDeserializer<Response>(), onMessage: onMessage, onEnd: onEnd)
  }

  /// ``startServerStreaming(_:_:prepared:compress:onMessage:onEnd:)`` with each response
  /// read by `deserializer`, on the loop, as it arrives; what it throws ends the call with
  /// INTERNAL, as a response that does not decode does, and drops the responses after it.
  package func startServerStreaming<Request: ProtoMessage, Response, Deserializer>(
    _ method: ProtoMethod<Request, Response>, _ request: Request, prepared: PreparedCall,
    compress: Bool = false, deserializer: Deserializer,
    onMessage: @escaping @Sendable (Deserializer.Message) -> Void,
    onEnd: @escaping @Sendable (RPCError?) -> Void
  ) throws(RPCError) -> LoopCall
  where Deserializer: MessageDeserializer, Deserializer.Message: Sendable {
    try startServerStreaming(
      method, request, prepared: prepared, compress: compress,
      receiver: ClosureReceiver(deserializer: deserializer, onMessage: onMessage, onEnd: onEnd))
  }

  /// ``startServerStreaming(_:_:prepared:compress:onMessage:onEnd:)`` reporting to
  /// `receiver`, which the call holds until it ends: each response read by its deserializer,
  /// then the end, on the loop. What the deserializer throws ends the call with INTERNAL, as a
  /// response that does not decode does, and drops the responses after it.
  package func startServerStreaming<Request: ProtoMessage, Response, Receiver>(
    _ method: ProtoMethod<Request, Response>, _ request: Request, prepared: PreparedCall,
    compress: Bool = false, receiver: Receiver
  ) throws(RPCError) -> LoopCall where Receiver: ServerStreamReceiver {
    if let interception = prepared.interception {
      return LoopCall(task: Task(executorPreference: loop) { [self] in
        do {
          try await serverStreaming(
            path: method.path, request: request, serializer: ProtoSerializer<Request>(),
            deserializer: receiver.deserializer, options: interception.options
          ) { responses in
            for try await response in responses { receiver.received(response) }
          }
          receiver.ended(nil)
        } catch {
          receiver.ended(RPCError.local(error))
        }
      })
    }
    let stream = try makeLoopStream(
      prepared, Self.frame(request, compress: compress), oneResponse: false)
    stream.observer = StreamingObserver(receiver: receiver)
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

/// What a loop-driven unary call reports to, on its loop: its one response, decompressed
/// but not decoded, or the call's error (``GRPCChannel/startUnary(_:framedRequest:receiver:)``).
/// The receiver decodes it (``ReceivedMessage/decoded(by:)``): the call's end takes no
/// generic code of its own.
package protocol UnaryCallReceiver: AnyObject, Sendable {
  /// The call is over: its response, or its error. Called once.
  func ended(_ result: Result<ReceivedMessage, RPCError>)
}

extension ReceivedMessage {
  /// This response as `deserializer` reads it; what it throws is the INTERNAL error a call
  /// reports for a response it cannot decode.
  @inlinable
  package func decoded<Deserializer: MessageDeserializer>(by deserializer: Deserializer)
    -> Result<Deserializer.Message, RPCError>
  {
    do {
      return .success(try deserializer.deserialize(self))
    } catch {
      return .failure(
        RPCError(
          code: .internalError, message: "could not decode a response message: \(error)",
          cause: error))
    }
  }
}

/// A response handed on as it arrived, for a receiver that decodes it itself.
private struct PassThroughDeserializer: MessageDeserializer {
  func deserialize(_ message: ReceivedMessage) -> ReceivedMessage { message }
}

extension ClientStream {
  /// Hands a loop-driven unary call's end to `receiver`: the one response, decompressed, or
  /// the call's error (a call that ended OK without a response is UNIMPLEMENTED, as
  /// ``GRPCChannel/single(_:_:_:_:_:)`` says).
  func endUnary(_ receiver: any UnaryCallReceiver) {
    let (response, outcome) = takeUnaryEnd()
    let result: Result<ReceivedMessage, RPCError>
    switch outcome {
    case .failure(let error): result = .failure(error)
    case .success(let trailers):
      if let response {
        result = Result { () throws(RPCError) in
          try ResponseDecoding.decompress(response, limit: maxReceiveSize)
        }
      } else {
        result = .failure(GRPCChannel.cardinalityError(received: 0, trailers: trailers))
      }
    }
    receiver.ended(result)
  }
}

/// A unary receiver made of a deserializer and a closure.
private final class ClosureUnaryReceiver<Deserializer: MessageDeserializer>: UnaryCallReceiver
where Deserializer.Message: Sendable {
  let deserializer: Deserializer
  let completion: @Sendable (Result<Deserializer.Message, RPCError>) -> Void

  init(
    deserializer: Deserializer,
    completion: @escaping @Sendable (Result<Deserializer.Message, RPCError>) -> Void
  ) {
    self.deserializer = deserializer
    self.completion = completion
  }

  func ended(_ result: Result<ReceivedMessage, RPCError>) {
    completion(result.flatMap { $0.decoded(by: deserializer) })
  }
}

/// What a loop-driven server-streaming call reports to, on its loop: each response read by
/// ``deserializer``, then the end.
///
/// One object holds what the call needs to know: a feed stream may stay open for hours, ten
/// thousand of them at once, and a deserializer with two closures took three allocations,
/// about 130 bytes a stream more than one receiver.
package protocol ServerStreamReceiver: AnyObject, Sendable {
  associatedtype Deserializer: MessageDeserializer where Deserializer.Message: Sendable
  /// Reads each response as it arrives, on the loop.
  var deserializer: Deserializer { get }
  /// One response, in order.
  func received(_ message: Deserializer.Message)
  /// The call is over: nil when it ended OK. Called once, after every response.
  func ended(_ error: RPCError?)
}

/// A receiver made of a deserializer and two closures.
private final class ClosureReceiver<Deserializer: MessageDeserializer>: ServerStreamReceiver
where Deserializer.Message: Sendable {
  let deserializer: Deserializer
  let onMessage: @Sendable (Deserializer.Message) -> Void
  let onEnd: @Sendable (RPCError?) -> Void

  init(
    deserializer: Deserializer,
    onMessage: @escaping @Sendable (Deserializer.Message) -> Void,
    onEnd: @escaping @Sendable (RPCError?) -> Void
  ) {
    self.deserializer = deserializer
    self.onMessage = onMessage
    self.onEnd = onEnd
  }

  func received(_ message: Deserializer.Message) { onMessage(message) }
  func ended(_ error: RPCError?) { onEnd(error) }
}

/// A loop-driven server-streaming call: each response decoded in turn, then the end.
private final class StreamingObserver<Receiver: ServerStreamReceiver>: ClientStreamObserver,
  @unchecked Sendable
{
  // @unchecked Sendable: `failed` is only touched on the stream's loop.
  let receiver: Receiver
  /// A message could not be decoded: the call is being ended with that error, and messages
  /// already on their way are dropped.
  private var failed = false

  init(receiver: Receiver) {
    self.receiver = receiver
  }

  func received(_ message: ClientStream.Received, from stream: ClientStream) {
    guard !failed else { return }
    do {
      receiver.received(try ResponseDecoding.decode(message, stream, receiver.deserializer))
    } catch {
      // ResponseDecoding has cancelled the stream with this error; `ended` reports it.
      failed = true
    }
  }

  func ended(_ stream: ClientStream) {
    switch stream.takeEnd().outcome {
    case .success: receiver.ended(nil)
    case .failure(let error): receiver.ended(error)
    }
  }
}
