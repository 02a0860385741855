internal import FleetSync
internal import Logging

/// One call: its HTTP/2 stream as seen by the connection's loop, and its request and response
/// queues as seen by the caller's task.
///
/// Loop-only state (the core's: state machine, deframer, owed bytes, deadline timer, stream ID
/// and session; the retries and the loop-driven call's driver) is touched only on `loop`. What
/// both sides touch — outbound request bytes and received messages (the core's
/// ``StreamCore/mailbox``), the waiting continuations and the outcome (`shared`) — is decided
/// under the core's lock, and continuations are resumed after it is released. A loop-driven
/// call (``loopDriven``: a ``LoopCall``) has no caller off the loop: its mailbox and `shared`
/// are loop-confined instead, reached without a lock and with the thread checked in every
/// build (``withShared(_:)``).
///
/// Flow control: bytes of a message still being received are acknowledged (consumed) at once,
/// since the message cannot complete otherwise and its size is bounded by `maxReceiveSize`.
/// Bytes of complete messages stay unacknowledged until the caller takes the message, so a
/// slow reader holds at most one stream window of complete messages plus one partial one.
final class ClientStream: StreamCore, TimerTarget, LoopTask, @unchecked Sendable {
  // @unchecked Sendable: immutable lets, `shared` under the core's lock (or loop-confined),
  // and loop-only vars (see above).

  /// The request fields every call to this method sends (see RequestHeaderPrefix).
  let headerPrefix: RequestHeaderPrefix
  /// This call's own request fields, sent after `headerPrefix`'s: timeout, compression,
  /// metadata.
  let requestHeaders: [HeaderField]
  let maxReceiveSize: Int
  /// The largest request message payload; `.max`: none.
  let maxSendSize: Int
  let deadline: MonotonicInstant?
  let timeout: Duration?
  /// The call sends `authorization` metadata (see ChannelOptions.allowInsecureCredentials).
  let carriesCredentials: Bool
  /// Wait for the channel to be ready instead of failing fast (CallOptions.waitForReady).
  let waitForReady: Bool
  /// Started and ended on the loop, with no task waiting on it (a ``LoopCall``): `shared` is
  /// loop-confined, not locked.
  let loopDriven: Bool

  // MARK: Loop-only
  // The core's `session`: from the stream's submission to its close (or retry). Not the
  // connection: a stream's close and retry go back to it as ``AfterClose``, and its other
  // part in a reset (a keepalive probe after a deadline) the session asks of its role.
  // Their exclusivity is not checked at run time, as the core's loop-only vars' are not (see
  // ``StreamCore``): the driver is told of an end only after these are settled.
  /// The call is over (``finish(_:reset:)`` ran): `shared`'s outcome is set. The loop's own
  /// copy, so the pool and the connection check it with no lock.
  @exclusivity(unchecked) var ended = false
  /// Transparent retries so far (see ``closed(http2ErrorCode:lostConnection:)``).
  @exclusivity(unchecked) var transparentRetries = 0
  /// The call's driver when no task waits on it (a ``LoopCall``): told of the messages (if
  /// it streams them) and of the end, on the loop, after nghttp2's callbacks have returned.
  /// Set before the stream is started; cleared once the end is handed over.
  @exclusivity(unchecked) var observer: (any ClientStreamObserver)?
  /// A loop-driven unary call's driver instead (no `observer` then): told of the end only.
  @exclusivity(unchecked) var unaryReceiver: (any UnaryCallReceiver)?
  /// A loop-driven unary call's response, kept for its end (``takeUnaryEnd()``).
  @exclusivity(unchecked) var unaryResponse: Received?
  /// `unaryResponse`'s bytes while they are lent (its payload is empty then): a view of the
  /// DATA the session is handing over, valid until its batch is through. The stream's end
  /// reads them there when it comes in that batch; else they are copied (``runOnLoop()``).
  @exclusivity(unchecked) var unaryLent: UnsafeRawBufferPointer?
  /// The end is on its way to the observer or the unary receiver (``runOnLoop()`` hands it
  /// over and clears them): nothing after it is handed on.
  @exclusivity(unchecked) var endQueued = false

  // MARK: Shared
  /// The role's part of what the loop shares with the caller, beside the core's mailbox:
  /// reached only through ``withShared(_:)``, under the core's lock (or on the loop). Its
  /// exclusivity is not checked at run time (those are the checks; a nested `withShared`
  /// would deadlock on the lock).
  @exclusivity(unchecked) private var shared: Shared

  struct Shared {
    /// The request stream is half-closed: no more request bytes come.
    var outboundFinished = false
    var head: StreamStateMachine.ResponseHead?
    var headWaiters: [CheckedContinuation<Metadata, any Error>] = []
    /// The one caller waiting for the end (``awaitEnd()``), resumed by `finish`, which takes it
    /// under the lock. Checked, not unsafe: ThreadSanitizer cannot see the runtime order an
    /// unsafe one's resume before its await relies on (see ``awaitEnd()``); a checked one costs
    /// its canary's allocation, where a list of waiters cost the list's.
    var endWaiter: CheckedContinuation<Void, Never>?
    /// The outcome, kept as two optional references (16 bytes where a `CallOutcome?` takes
    /// 89): the trailers of a success, or the error of a failure in a box. Not an enum with an
    /// `indirect` case: Swift keeps such a case's tag in its box pointer's high bits, where
    /// LeakSanitizer sees no pointer, so the error of a call still alive at a leak check
    /// (libFuzzer's, after each input) was reported leaked.
    private var trailers: Metadata?
    private var failure: FailureBox?
    /// Messages written with ``write(_:finish:)`` and responses delivered, for interceptors.
    var messagesWritten = 0
    var messagesDelivered = 0

    init(outboundFinished: Bool) {
      self.outboundFinished = outboundFinished
    }

    var outcome: CallOutcome? {
      get {
        if let failure { return .failure(failure.error) }
        return trailers.map { .success($0) }
      }
      set {
        switch newValue {
        case .success(let metadata):
          trailers = metadata
          failure = nil
        case .failure(let error):
          trailers = nil
          failure = FailureBox(error: error)
        case nil:
          trailers = nil
          failure = nil
        }
      }
    }
  }

  /// A failed call's error, boxed: every call carries room for its outcome while it runs (for
  /// hours, for a feed stream), and an inline `RPCError` is 88 bytes of it. A failure costs one
  /// allocation; a success none.
  final class FailureBox: Sendable {
    let error: RPCError
    init(error: RPCError) { self.error = error }
  }

  /// A complete response message waiting for the caller, and the acknowledgement it owes.
  typealias Received = StreamMessage

  /// A unary or client-streaming call: a second response message ends it at once.
  let oneResponse: Bool
  /// Response messages received so far (loop only).
  @exclusivity(unchecked) var messagesReceived = 0

  /// How much framed request data may wait unsent before `write` suspends.
  static let outboundLimit = 1 << 20
  /// Transparent retries of one call, at most (each after the server refused it unprocessed).
  static let maxTransparentRetries = 8

  init(
    loop: EventLoop, headerPrefix: RequestHeaderPrefix, requestHeaders: [HeaderField],
    initialRequest: [UInt8], finished: Bool,
    maxReceiveSize: Int, maxSendSize: Int = .max, timeout: Duration?,
    carriesCredentials: Bool = false,
    waitForReady: Bool = false, oneResponse: Bool = false, loopDriven: Bool = false
  ) {
    self.loopDriven = loopDriven
    self.oneResponse = oneResponse
    self.carriesCredentials = carriesCredentials
    self.waitForReady = waitForReady
    self.headerPrefix = headerPrefix
    self.requestHeaders = requestHeaders
    self.maxReceiveSize = maxReceiveSize
    self.maxSendSize = maxSendSize
    self.timeout = timeout
    self.deadline = timeout.map { MonotonicInstant.now.advanced(by: $0) }
    self.shared = Shared(outboundFinished: finished)
    // The mailbox holds the request bytes for nghttp2 (kept for a replay until the call is
    // committed: response headers arrived, or too much was sent to keep), responses for the
    // caller.
    super.init(
      loop: loop, id: -1, machine: .client(), maxReceiveSize: maxReceiveSize,
      outbound: initialRequest, keepsSentBytes: true, outboundLimit: Self.outboundLimit,
      loopConfined: loopDriven)
  }

  /// Runs `body` on the shared state: under its lock, or for a loop-driven call, whose every
  /// side runs on the loop, without it — on the loop thread only, checked in every build.
  @inline(__always)
  func withShared<T>(_ body: (inout Shared) -> T) -> T {
    withLocked { body(&shared) }
  }

  /// Under the core's lock: the request stream is half-closed.
  override var outboundFinished: Bool { shared.outboundFinished }

  // MARK: Loop side

  /// The stream was submitted to nghttp2 as `id`, on `session`.
  func started(id: Int32, on session: HTTP2Session) {
    loop.checkInLoop()
    self.id = id
    self.session = session
    armDeadline()
  }

  /// Starts the deadline timer, once: when the pool first takes the call, so a call waiting
  /// for a connection (or for ready) still ends on time.
  func armDeadline() {
    loop.checkInLoop()
    if let deadline, deadlineTimer == nil, !machine.isClosed {
      deadlineTimer = loop.scheduleTimer(at: deadline, target: self)
    }
  }

  /// The deadline passed (the timer ``armDeadline()`` set).
  func timerFired() {
    deadlineTimer = nil
    fail(
      RPCError(
        code: .deadlineExceeded,
        message: "the call's deadline of \(Self.describe(timeout!)) passed before it ended"),
      reset: true)
  }

  /// New request bytes or a half-close arrived from the caller.
  func resumeData() {
    loop.checkInLoop()
    withLocked { mailbox.resumeHopRan() }
    guard bodyDeferred, !streamClosed, let session else { return }
    // Fails only when nghttp2 no longer defers the stream's data: nothing waits to resume.
    _ = session.resumeBody(of: id, deferred: &bodyDeferred)
  }

  /// What the connection does with a stream that closed: nothing more, or start it again
  /// (through its pool) after `delay` — a transparent retry the stream has prepared itself for.
  /// The stream decides; it holds no pool to act on.
  enum AfterClose: Equatable {
    case done
    /// Retry number `number` (from 1), to start after `delay` (nil: at once).
    case retry(number: Int, after: Duration?)
  }

  /// nghttp2 closed the stream (after trailers, a reset from either side, or a lost
  /// connection: `lostConnection` then says why). Returns whether the connection's pool is to
  /// start it again (``AfterClose/retry(number:after:)``).
  func closed(http2ErrorCode: UInt32, lostConnection: RPCError? = nil) -> AfterClose {
    loop.checkInLoop()
    if lostConnection == nil, http2ErrorCode == HTTP2ErrorCode.refusedStream {
      let retry = retryTransparently()
      if retry != .done { return retry }
    }
    if let lostConnection, !machine.isClosed {
      machine.close()
      finish(.failure(lostConnection), reset: false)
    } else if let error = machine.streamClosed(http2ErrorCode: http2ErrorCode) {
      finish(.failure(error), reset: false)
    }
    streamClosed = true
    // Messages nobody read any more still hold connection window: give it back now.
    releaseOwed()
    session = nil
    return .done
  }

  /// The server refused the stream (REFUSED_STREAM, or above a GOAWAY's last stream ID): it
  /// was not processed, so unless response headers already arrived it is to be sent again,
  /// whole, as gRPC's transparent retry allows. Readies the stream for that and returns the
  /// retry, or `.done` when it cannot be retried. Private: only the stream's close may ready
  /// a retry, and it returns it to the connection; a caller that dropped the `.retry` would
  /// strand the call (off its connection, with no stream ID, never ended).
  private func retryTransparently() -> AfterClose {
    guard !machine.isClosed, transparentRetries < Self.maxTransparentRetries else {
      return .done
    }
    let replayable = withShared { s -> Bool in
      s.outcome == nil && mailbox.rewindForReplay()
    }
    guard replayable else { return .done }
    transparentRetries += 1
    releaseOwed()
    id = -1
    session = nil
    unaryResponse = nil
    unaryLent = nil
    restartInbound(maxReceiveSize: maxReceiveSize)
    return .retry(
      number: transparentRetries, after: Self.transparentRetryDelay(after: transparentRetries))
  }

  /// How long transparent retry number `retry` (from 1) waits before it starts: the first
  /// goes at once; then 10 ms, doubling: the seven later ones wait 1,270 ms in all.
  static func transparentRetryDelay(after retry: Int) -> Duration? {
    retry <= 1 ? nil : .milliseconds(10 << min(retry - 2, 10))
  }

  /// Fails the call unless it is already over; `reset` sends RST_STREAM(CANCEL).
  func fail(_ error: RPCError, reset: Bool) {
    loop.checkInLoop()
    guard !machine.isClosed else { return }
    machine.close()
    finish(.failure(error), reset: reset)
  }

  func finish(_ outcome: CallOutcome, reset: Bool) {
    loop.checkInLoop()
    loop.checkOutsideCallbacks()
    if reset, !streamClosed, id > 0 {
      // Reset once its deadline has passed: a call that timed out on this connection.
      session?.cancel(id, deadlinePassed: deadline.map { $0 <= .now } ?? false)
    }
    ended = true
    let error: RPCError? = if case .failure(let e) = outcome { e } else { nil }
    let (heads, endWaiter) = end(error) {
      if shared.outcome == nil { shared.outcome = outcome }
      defer { shared.endWaiter = nil }
      return (shared.headWaiters.exchange([]), shared.endWaiter)
    }
    for head in heads {
      if let error { head.resume(throwing: error) } else { head.resume(returning: Metadata()) }
    }
    endWaiter?.resume()
    guard observer != nil || unaryReceiver != nil, !endQueued else { return }
    endQueued = true
    if let session, session.isHandingOver {
      // Ended by what its session is handing over (the server's trailers, a reset, a broken
      // response): the session hands the end on once the batch is through, after the
      // stream's close and with no trip through the loop's queue.
      session.afterBatch(self)
    } else {
      // Ended by a timer, a cancel, a lost connection, or as it started (a closed channel):
      // after the code that ended it has returned, so that a driver never hears of the end
      // inside its own call that started or ended it.
      loop.execute(self)
    }
  }

  /// Hands the end to the observer (``finish(_:reset:)`` queued it with the session or on
  /// the loop); outside nghttp2's callbacks, so the observer may start or reset calls.
  /// Queued with the session as a unary response was lent (``receivedData(_:)``), and the
  /// call not over when the batch is: keeps the response's bytes before they go.
  func runOnLoop() {
    loop.checkOutsideCallbacks()
    guard endQueued else {
      if let lent = unaryLent {
        unaryLent = nil
        unaryResponse?.frame.payload = Array(lent)
      }
      return
    }
    if let unaryReceiver {
      self.unaryReceiver = nil
      endUnary(unaryReceiver)
    } else if let observer {
      self.observer = nil
      observer.ended(self)
    }
  }

  static func deframingError(_ error: MessageDeframer.Failure) -> RPCError {
    switch error {
    case .tooLarge(let announced, let limit):
      RPCError(
        code: .resourceExhausted,
        message: "the server sent a message of \(announced) bytes; the limit is \(limit) bytes")
    case .badFlag(let flag):
      RPCError(code: .internalError, message: "a message's compressed flag is \(flag), not 0 or 1")
    }
  }

  static func describe(_ duration: Duration) -> String {
    let (s, atto) = duration.components
    let ms = Double(s) * 1000 + Double(atto) / 1e15
    return ms < 1000 ? "\(Int(ms.rounded())) ms" : "\(Double(Int(ms / 10)) / 100) s"
  }
}

extension Array {
  /// Replaces the array with `other` and returns what it held.
  mutating func exchange(_ other: [Element]) -> [Element] {
    let old = self
    self = other
    return old
  }
}
