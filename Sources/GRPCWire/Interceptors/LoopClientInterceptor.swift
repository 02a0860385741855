/// A client interceptor with no async code: it runs on the event loop around a loop-driven
/// call (``LoopCall``), which then stays a call with no task, and around every other call as
/// the ``ClientInterceptor`` it also is.
///
/// It has two hooks instead of `intercept`'s `next`:
/// - ``prepare(_:)`` sees the call before it is made and may change its options (add
///   metadata, shorten the timeout) or refuse it by throwing. For a loop-driven call it runs
///   when the call is prepared (``GRPCChannel/prepare(path:options:kind:)``), once for every call
///   made from that ``PreparedCall``, whose fields are laid out once; for any other call, as
///   the call starts.
/// - ``callEnded(_:_:after:)`` learns how each call ended — status, response metadata,
///   message counts — and how long it took. For a loop-driven call it runs on the loop, as
///   the call ends, before the call's own callback; it must not block.
///
/// A loop-driven call runs its interceptors on the loop when every interceptor of its channel
/// and call is a `LoopClientInterceptor`; with any other one among them (an async
/// interceptor: one that binds task-local values around `next`, say), the call runs them all
/// in a task that prefers the loop, as ``LoopCall`` says. Hooks run in the order of
/// ``ClientInterceptor``'s: `prepare` outermost first, `callEnded` innermost first.
public protocol LoopClientInterceptor: ClientInterceptor {
  /// The call before it is made: change `call.options`, or throw to refuse it (nothing is
  /// sent; the caller gets the error). The default does nothing.
  func prepare(_ call: inout ClientCall) throws(RPCError)

  /// The call is over: how it ended as its caller saw it, and how long after its start.
  func callEnded(_ call: ClientCall, _ summary: ClientCallSummary, after duration: Duration)
}

extension LoopClientInterceptor {
  public func prepare(_ call: inout ClientCall) throws(RPCError) {}

  /// The two hooks around `next`, for a call made in a task.
  public func intercept(
    _ call: ClientCall, next: (ClientCall) async throws -> ClientCallSummary
  ) async throws -> ClientCallSummary {
    var call = call
    try prepare(&call)
    let start = MonotonicInstant.now
    do {
      let summary = try await next(call)
      callEnded(call, summary, after: start.duration(to: .now))
      return summary
    } catch {
      // The caller's error: what `next` threw is all there is to know (counts of a
      // streaming call included: 0 where unknown).
      let failure = RPCError.local(error)
      let oneRequest = call.kind == .unary || call.kind == .serverStreaming
      callEnded(
        call,
        ClientCallSummary(
          status: failure.status, trailingMetadata: failure.metadata,
          requestMessages: oneRequest ? 1 : 0, responseMessages: 0),
        after: start.duration(to: .now))
      throw error
    }
  }
}

/// A prepared call's path, options and interceptors: what a loop-driven call needs to run
/// them, on the loop when they all can, in a task otherwise.
final class Interception: Sendable {
  let path: String
  /// The options as the caller gave them, for the interceptors to run in a task.
  let options: CallOptions
  let interceptors: [any ClientInterceptor]
  /// The interceptors, when every one of them runs on the loop; nil otherwise.
  let onLoop: [any LoopClientInterceptor]?
  /// The call as their ``LoopClientInterceptor/prepare(_:)`` left it (with `onLoop`).
  let call: ClientCall

  /// The interception of a call of `call.method`; runs `prepare` of each interceptor (when
  /// all are loop interceptors), which changes `call`.
  init(_ call: inout ClientCall, interceptors: [any ClientInterceptor]) throws(RPCError) {
    path = call.method.path
    options = call.options
    self.interceptors = interceptors
    let onLoop = interceptors.compactMap { $0 as? any LoopClientInterceptor }
    if onLoop.count == interceptors.count {
      for interceptor in onLoop { try interceptor.prepare(&call) }
      self.onLoop = onLoop
    } else {
      self.onLoop = nil
    }
    self.call = call
  }

  /// Tells the loop interceptors, innermost first, that the call started at `start` ended
  /// as `summary` says.
  func ended(_ summary: ClientCallSummary, startedAt start: MonotonicInstant) {
    guard let onLoop else { return }
    let duration = start.duration(to: .now)
    for interceptor in onLoop.reversed() { interceptor.callEnded(call, summary, after: duration) }
  }
}

extension ClientStream {
  /// How this loop-driven call ended, as interceptors learn it once its end is handed on:
  /// `error` (nil for OK), `responses` received.
  func loopCallSummary(_ error: RPCError?, responses: Int) -> ClientCallSummary {
    let progress = self.progress
    var trailers = Metadata()
    if case .success(let metadata)? = progress.outcome { trailers = metadata }
    return ClientCallSummary(
      status: error?.status ?? .ok, initialMetadata: progress.head ?? Metadata(),
      trailingMetadata: error?.metadata ?? trailers, requestMessages: 1,
      responseMessages: responses)
  }
}

/// A loop-driven unary call's receiver behind loop interceptors: tells them of the end, then
/// the caller's receiver. Immutable: whether the end was reported is the business of the one
/// ``ended(_:)`` call that reports it.
final class InterceptedUnaryReceiver: UnaryCallReceiver {
  let receiver: any UnaryCallReceiver
  let interception: Interception
  let started = MonotonicInstant.now
  /// The call's stream, for the summary. The stream holds this object until it hands it the
  /// end, and lets go of it then, so the two form no lasting cycle.
  let stream: ClientStream

  init(_ receiver: any UnaryCallReceiver, _ interception: Interception, stream: ClientStream) {
    self.receiver = receiver
    self.interception = interception
    self.stream = stream
  }

  func ended(_ result: Result<ReceivedMessage, RPCError>) {
    let responses: Int
    switch result {
    case .success: responses = 1
    case .failure: responses = 0
    }
    var reported = false
    // The receiver reports the error its caller sees: a response that does not decode is
    // INTERNAL for the interceptors too. Once: a second report is dropped.
    receiver.ended(result) { error in
      guard !reported else { return }
      reported = true
      report(error, responses: responses)
    }
    // A receiver that never called `report`: the interceptors hear the call's own outcome.
    if !reported { report(result.failure, responses: responses) }
  }

  /// Tells the interceptors the call ended with `error` (nil: OK).
  private func report(_ error: RPCError?, responses: Int) {
    interception.ended(stream.loopCallSummary(error, responses: responses), startedAt: started)
  }
}

extension Result {
  /// The error, or nil for a success.
  var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
