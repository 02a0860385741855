public import ProtoRuntime

/// A call driven by its channel's event loop with no task waiting on it: started on the loop
/// thread, its results arrive as callbacks on that thread.
///
/// The cheap way to make the same call again and again from code the loop owns (a poller
/// that asks a server once a second about each of ten thousand resources, holding nothing
/// between calls): no task, continuation or executor hop per call, and a request encoded and
/// checked once per template rather than once per call:
///
/// ```swift
/// // Once per template (on any thread): options checked, header fields laid out, request framed.
/// let prepared = try channel.prepare(Echo.get, options: CallOptions(timeout: .seconds(5)))
///   .laidOut()
/// let framed = GRPCChannel.frame(request)
/// // Per call, on the loop (a timer, `eventLoop.execute`, another call's callback):
/// let call = try channel.startUnary(prepared, framedRequest: framed, as: EchoResponse.self) {
///   result in /* on the loop: .success(response) or .failure(RPCError) */
/// }
/// ```
///
/// Threads: ``GRPCChannel/startUnary(_:framedRequest:receiver:)`` and its siblings must be
/// called on the channel's loop (``GRPCChannel/eventLoop``); called elsewhere they stop the
/// process with a message saying so (``EventLoop/preconditionInEventLoop(_:file:line:)``),
/// in every build. Their callbacks run on the loop, outside nghttp2's callbacks, so they may
/// start or cancel calls; they must not block, as they share the thread with every socket of
/// the loop. ``cancel()`` may be called from any thread.
///
/// Errors: what makes a call impossible (a closed channel, invalid metadata, credentials over
/// plaintext to another host, a deadline already passed, a request over the send limit) is
/// thrown by the start function, and nothing is started; everything after — the network, the
/// server's status, a response that does not decode — arrives once, as the call's
/// ``RPCError``, in its callback.
///
/// Interceptors (``ChannelOptions/interceptors``, ``CallOptions/interceptors``) that are all
/// ``LoopClientInterceptor``s run on the loop, and the call stays one with no task. With any
/// other interceptor (async code) among them, the call runs them in a task that prefers the
/// loop; its callbacks still run on the loop thread.
///
/// A value: copies are handles to the same call (a struct, so starting a call allocates no
/// handle of its own).
public struct LoopCall: Sendable {
  private enum Driver {
    case stream(ClientStream)
    case task(Task<Void, Never>)
  }

  private let driver: Driver

  init(stream: ClientStream) {
    driver = .stream(stream)
  }

  init(task: Task<Void, Never>) {
    driver = .task(task)
  }

  /// Ends the call with CANCELLED (resetting its stream) unless it is already over; its
  /// end callback then reports that. Callable from any thread, any number of times.
  public func cancel() {
    switch driver {
    case .stream(let stream):
      stream.cancel(RPCError(code: .cancelled, message: "the call was cancelled by its owner"))
    case .task(let task):
      task.cancel()
    }
  }
}

extension GRPCChannel {
  /// Starts a unary call of `method` from the loop thread (``eventLoop``); `completion` runs
  /// on the loop once the call is over, with the response or the call's ``RPCError``.
  ///
  /// Throws, and starts nothing, when the call cannot be made at all (a closed channel,
  /// invalid metadata, credentials over plaintext to another host): what ``unary(_:_:options:)``
  /// would throw at once.
  public func startUnary<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions,
    completion: @escaping @Sendable (Result<Response, RPCError>) -> Void
  ) throws(RPCError) -> LoopCall {
    // Framed as the prepared call says: a loop interceptor may have changed the compression.
    let prepared = try prepare(path: method.path, options: options)
    return try startUnary(
      prepared, framedRequest: Self.frame(request, compress: prepared.compresses),
      as: Response.self, completion: completion)
  }

  /// Starts a unary call `prepared` describes, from the loop thread, with a request already
  /// framed (``MessageFramer``'s 5-byte prefix, then the message): for a call repeated with
  /// the same request, which is then encoded once. `completion` runs on the loop.
  public func startUnary<Response: ProtoMessage>(
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
  public func startUnary<Deserializer: MessageDeserializer>(
    _ prepared: PreparedCall, framedRequest: [UInt8], deserializer: Deserializer,
    completion: @escaping @Sendable (Result<Deserializer.Message, RPCError>) -> Void
  ) throws(RPCError) -> LoopCall where Deserializer.Message: Sendable {
    loop.preconditionInEventLoop("GRPCChannel.startUnary")
    if let interception = prepared.interception, interception.onLoop == nil {
      try checkStart(prepared, framedRequest)
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
  public func startUnary(
    _ prepared: PreparedCall, framedRequest: [UInt8], receiver: some UnaryCallReceiver
  ) throws(RPCError) -> LoopCall {
    if let interception = prepared.interception {
      guard interception.onLoop != nil else {
        return try startUnary(
          prepared, framedRequest: framedRequest, deserializer: PassThroughDeserializer(),
          completion: { receiver.ended($0) })
      }
      // Every interceptor runs on the loop: the call stays one with no task.
      let stream = try makeLoopStream(prepared, framedRequest, oneResponse: true)
      stream.unaryReceiver = InterceptedUnaryReceiver(receiver, interception, stream: stream)
      return start(stream)
    }
    let stream = try makeLoopStream(prepared, framedRequest, oneResponse: true)
    stream.unaryReceiver = receiver
    return start(stream)
  }

  /// `request` framed as a gRPC message (gzip-compressed when `compress`), for
  /// ``startUnary(_:framedRequest:as:completion:)``.
  public static func frame(_ request: some ProtoMessage, compress: Bool = false) -> [UInt8] {
    var bytes: [UInt8] = []
    MessageFramer.append(to: &bytes, compress: compress) {
      ProtoSerializer().serialize(request, into: &$0)
    }
    return bytes
  }

  /// The stream of a loop-driven call, refused when its deadline has already passed.
  func makeLoopStream(_ prepared: PreparedCall, _ framedRequest: [UInt8], oneResponse: Bool)
    throws(RPCError) -> ClientStream
  {
    loop.preconditionInEventLoop("GRPCChannel.startUnary/startServerStreaming")
    try checkStart(prepared, framedRequest)
    return stream(prepared, framedRequest, true, oneResponse: oneResponse, loopDriven: true)
  }

  /// Throws what makes a call impossible before it starts (on the loop, or in a task): a
  /// closed channel, a deadline already passed (when `deadline`: a loop-driven call's
  /// check), a request over the send limit.
  func checkStart(_ prepared: PreparedCall, _ framedRequest: [UInt8], deadline: Bool = true)
    throws(RPCError)
  {
    guard !isClosed else {
      throw RPCError(code: .unavailable, message: "the channel to \(target) is closed")
    }
    if deadline, let timeout = prepared.timeout, timeout <= .zero {
      throw RPCError(
        code: .deadlineExceeded, message: "the call's deadline had passed before it started")
    }
    if framedRequest.count - MessageFramer.prefixLength > prepared.maxSendSize {
      throw RPCError.requestTooLarge(
        framedRequest.count - MessageFramer.prefixLength, prepared.maxSendSize)
    }
  }

  func start(_ stream: ClientStream) -> LoopCall {
    pool.value.start(stream)
    return LoopCall(stream: stream)
  }
}

/// What a loop-driven unary call reports to, on its loop: its one response, decompressed
/// but not decoded, or the call's error (``GRPCChannel/startUnary(_:framedRequest:receiver:)``).
/// The receiver decodes it (``ReceivedMessage/decoded(by:)``): the call's end takes no
/// generic code of its own.
///
/// Behind loop interceptors (``LoopClientInterceptor``), the call ends through
/// ``ended(_:reporting:)``: a receiver that decodes implements it to report the error its
/// caller sees (a response that does not decode is INTERNAL), which the interceptors then
/// hear of; the default reports the call's own outcome.
public protocol UnaryCallReceiver: AnyObject, Sendable {
  /// The call is over: its response, or its error. Called once.
  func ended(_ result: Result<ReceivedMessage, RPCError>)

  /// The call is over, behind loop interceptors: call `report` once, before acting on the
  /// result, with the error the call ends with for its caller (nil: OK) — the interceptors
  /// hear of the call's end from it. Called once, instead of ``ended(_:)``. If it returns
  /// without calling `report`, the call's own outcome (the server's status; OK with a
  /// response) is reported for it then.
  func ended(_ result: Result<ReceivedMessage, RPCError>, reporting report: (RPCError?) -> Void)

  /// The call is over, OK, and its response (uncompressed) is lent: read where it arrived,
  /// with no copy made, and valid only until this returns. Called once, instead of
  /// ``ended(_:)``, for a response whole in one read with the call's end; not behind
  /// interceptors. By default it is copied and handed to ``ended(_:)``.
  func ended(lending response: LentMessage)
}

extension UnaryCallReceiver {
  /// Reports the call's own outcome (`result`'s error), then calls ``ended(_:)``.
  public func ended(
    _ result: Result<ReceivedMessage, RPCError>, reporting report: (RPCError?) -> Void
  ) {
    if case .failure(let error) = result { report(error) } else { report(nil) }
    ended(result)
  }

  /// Copies the response and hands it to ``ended(_:)``.
  public func ended(lending response: LentMessage) {
    ended(.success(response.copied()))
  }
}

extension ReceivedMessage {
  /// This response as `deserializer` reads it; what it throws is the INTERNAL error a call
  /// reports for a response it cannot decode.
  @inlinable
  public func decoded<Deserializer: MessageDeserializer>(by deserializer: Deserializer)
    -> Result<Deserializer.Message, RPCError>
  {
    do {
      return .success(try deserializer.deserialize(self))
    } catch {
      return .failure(Self.undecodable(error))
    }
  }

  /// The INTERNAL error of a call whose response did not decode, for `error`.
  @inlinable
  public static func undecodable(_ error: any Error) -> RPCError {
    RPCError(
      code: .internalError, message: "could not decode a response message: \(error)",
      cause: error)
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
    let (taken, lent, outcome) = takeUnaryEnd()
    var response = taken
    let result: Result<ReceivedMessage, RPCError>
    switch outcome {
    case .failure(let error): result = .failure(error)
    case .success(let trailers):
      if let lent {
        guard response?.frame.compressed == true else {
          return receiver.ended(lending: LentMessage(bytes: lent, wasCompressed: false))
        }
        response?.frame.payload = Array(lent)
      }
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
private final class ClosureUnaryReceiver<Deserializer: MessageDeserializer>:
  UnaryCallReceiver
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

  func ended(_ result: Result<ReceivedMessage, RPCError>, reporting report: (RPCError?) -> Void) {
    let decoded = result.flatMap { $0.decoded(by: deserializer) }
    report(decoded.failure)
    completion(decoded)
  }
}
