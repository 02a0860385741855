public import ProtoRuntime

// Loop-driven server-streaming calls (see ``LoopCall``): each response reaches its receiver
// on the loop as it arrives, then the end.

extension GRPCChannel {
  /// Starts a server-streaming call of `method` from the loop thread: `onMessage` gets each
  /// response in order, then `onEnd` the outcome (nil for OK), all on the loop. A response
  /// that cannot be decoded ends the call with that error.
  public func startServerStreaming<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions,
    onMessage: @escaping @Sendable (Response) -> Void,
    onEnd: @escaping @Sendable (RPCError?) -> Void
  ) throws(RPCError) -> LoopCall {
    // Framed as the prepared call says: a loop interceptor may have changed the compression.
    let prepared = try prepare(path: method.path, options: options, kind: .serverStreaming)
    return try startServerStreaming(
      method, request, prepared: prepared, compress: prepared.compresses, onMessage: onMessage,
      onEnd: onEnd)
  }

  /// ``startServerStreaming(_:_:options:onMessage:onEnd:)`` with the call already prepared
  /// (``prepare(path:options:kind:)`` for `method`'s path, of kind `.serverStreaming`), so
  /// that calls with the same options share their header fields; `compress` must match the
  /// options' compression.
  public func startServerStreaming<Request: ProtoMessage, Response: ProtoMessage>(
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
  public func startServerStreaming<Request: ProtoMessage, Response, Deserializer>(
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
  public func startServerStreaming<Request: ProtoMessage, Response, Receiver>(
    _ method: ProtoMethod<Request, Response>, _ request: Request, prepared: PreparedCall,
    compress: Bool = false, receiver: Receiver
  ) throws(RPCError) -> LoopCall where Receiver: ServerStreamReceiver {
    loop.preconditionInEventLoop("GRPCChannel.startServerStreaming")
    let framed = Self.frame(request, compress: compress)
    if let interception = prepared.interception, interception.onLoop == nil {
      try checkStart(prepared, framed)
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
    let stream = try makeLoopStream(prepared, framed, oneResponse: false)
    stream.observer = StreamingObserver(receiver: receiver, interception: prepared.interception)
    return start(stream)
  }
}

/// Receives a loop-driven streaming call's messages as they arrive, and its end, on its
/// loop, outside nghttp2's callbacks. (A unary call has a ``UnaryCallReceiver`` instead.)
///
/// Not `Sendable`: the stream that holds it is its only way in, on the stream's loop.
protocol ClientStreamObserver: AnyObject {
  /// One complete response message; called in order.
  func received(_ message: ClientStream.Received, from stream: ClientStream)
  /// The call is over: its outcome is set. Called once, after every message.
  func ended(_ stream: ClientStream)
}

/// What a loop-driven server-streaming call reports to, on its loop: each response read by
/// ``deserializer``, then the end.
///
/// One object holds what the call needs to know: a feed stream may stay open for hours, ten
/// thousand of them at once, and a deserializer with two closures took three allocations,
/// about 130 bytes a stream more than one receiver.
public protocol ServerStreamReceiver: AnyObject, Sendable {
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
///
/// Not `Sendable`: loop-only, like the stream that alone holds it (its `failed` and
/// `responses` change as responses arrive), so the compiler keeps it from other threads.
private final class StreamingObserver<Receiver: ServerStreamReceiver>: ClientStreamObserver {
  let receiver: Receiver
  /// The loop interceptors the call runs, and when it started; nil without interceptors.
  let interception: (Interception, startedAt: MonotonicInstant)?
  /// A message could not be decoded: the call is being ended with that error, and messages
  /// already on their way are dropped.
  private var failed = false
  /// Responses handed to the receiver, for the interceptors.
  private var responses = 0

  init(receiver: Receiver, interception: Interception?) {
    self.receiver = receiver
    self.interception = interception.map { ($0, .now) }
  }

  func received(_ message: ClientStream.Received, from stream: ClientStream) {
    guard !failed else { return }
    do {
      receiver.received(try ResponseDecoding.decode(message, stream, receiver.deserializer))
      responses += 1
    } catch {
      // ResponseDecoding has cancelled the stream with this error; `ended` reports it.
      failed = true
    }
  }

  func ended(_ stream: ClientStream) {
    let error: RPCError?
    switch stream.takeEnd().outcome {
    case .success: error = nil
    case .failure(let failure): error = failure
    }
    if let (interception, started) = interception {
      interception.ended(
        stream.loopCallSummary(error, responses: responses), startedAt: started)
    }
    receiver.ended(error)
  }
}
