internal import FleetSync

/// One call arriving at a server: its HTTP/2 stream as the connection's loop sees it, and its
/// request and response queues as the handler's task sees them.
///
/// Loop-only: the core's state (the state machine, request deframer, deadline timer), the
/// handler task. Shared (decided under the core's lock, acted on outside it): request messages
/// for the handler and framed response bytes for nghttp2's data provider (the core's
/// ``StreamCore/mailbox``), the final status (`shared`).
///
/// Response headers are sent lazily — with the first message, or with the status — so a call
/// that fails before answering becomes a trailers-only response, as gRPC servers send.
final class ServerStream: StreamCore, TimerTarget, @unchecked Sendable {
  // @unchecked Sendable: immutable lets, `shared` under the core's lock, and loop-only vars
  // (see above).

  // MARK: Loop-only
  // The core's `session`: the one the stream arrived on, set once as it begins; what it
  // acknowledges request bytes and submits its response through (``ServerStream+Response``);
  // the connection's part (ping strikes, a reset nghttp2 cannot queue) the session asks of
  // its role.
  var acceptsGzip = false
  /// Set once, on the loop, before the handler's task starts; read-only afterwards.
  var maxSendMessageSize = 4 << 20
  /// The deframer's limit, for the handler's side (the deframer itself is the loop's).
  /// Set once, like `maxSendMessageSize`.
  var maxRequestSize = 4 << 20
  /// The connection's budget of queued response bytes. Set once, like `maxSendMessageSize`.
  var sendBudget: SendBudget?
  /// How much framed response data may wait unsent before a write suspends (off the loop;
  /// ``ServerOptions/streamSendBuffer``); the mailbox holds the same limit.
  let outboundLimit: Int
  var handlerTask: Task<Void, Never>?
  /// The method's handler when it runs on the loop (``LoopHandler``): called once the
  /// client has finished its request stream, instead of a task started with the call.
  var loopHandler: LoopHandler?
  /// DATA frames too small for a message prefix received so far (see
  /// ``ServerConnection/tinyDataFrameReceived(_:)``).
  var tinyFrames = 0
  /// Set once, on the loop, before the handler's task starts; read-only afterwards.
  var context: ServerContext?

  /// A complete request and the window it holds until the handler reads it.
  typealias QueuedRequest = StreamMessage

  // MARK: Shared
  /// The role's part of what the loop shares with the handler, beside the core's mailbox
  /// (requests for the handler, response bytes for nghttp2): reached only through
  /// ``withShared(_:)``, under the core's lock; its exclusivity is not checked at run time.
  @exclusivity(unchecked) private var shared = Shared()
  /// The status and trailers the last pull of the body found due (``bodyEnding()``), until
  /// they are submitted after it (``bodyPulled(_:resume:)``).
  private var trailersDue: (Status, Metadata)?

  struct Shared {
    var requestsFinished = false
    /// The handler's outcome, once it returned or threw.
    var status: (Status, Metadata)?
    /// Why the call ended early: the client reset it, or its deadline passed.
    var aborted: RPCError?
    /// The handler is done, or the call was aborted: no more response bytes come.
    var outboundFinished: Bool { status != nil || aborted != nil }
  }

  /// For a handler running on the loop's thread, the most framed response data that may wait
  /// unsent before a write suspends: 64 KiB is four DATA frames, enough to fill a flush, and
  /// about a millisecond of writing 64-byte messages.
  static let loopWriteLimit = 64 << 10

  /// A stream whose handler may queue up to `outboundLimit` response bytes unsent.
  init(loop: EventLoop, id: Int32, outboundLimit: Int) {
    self.outboundLimit = outboundLimit
    // Its limits come with the request's method (``StreamCore/restartInbound(maxReceiveSize:)``).
    super.init(
      loop: loop, id: id, machine: .server(), maxReceiveSize: 4 << 20,
      outboundLimit: outboundLimit)
  }

  /// Runs `body` on the shared state, under the core's lock; `body` may touch the mailbox.
  @inline(__always)
  func withShared<T, E: Error>(_ body: (inout Shared) throws(E) -> T) throws(E) -> T {
    try withLocked { () throws(E) -> T in try body(&shared) }
  }

  /// Under the core's lock: the handler is done, or the call was aborted.
  override var outboundFinished: Bool { shared.outboundFinished }

  // MARK: Loop side

  /// Request bytes arrived for this stream, its messages compressed as `encoding` says (the
  /// request headers' `grpc-encoding`, as the machine answered the DATA).
  func receivedData(
    _ bytes: UnsafeRawBufferPointer, encoding: StreamStateMachine.MessageEncoding
  ) -> RPCError? {
    loop.checkInLoop()
    loop.checkOutsideCallbacks()
    // A complete message's bytes are acknowledged when the handler reads it.
    let inbound: StreamCore.Inbound<QueuedRequest>
    do {
      inbound = try receive(bytes) { frame, owed in
        QueuedRequest(frame: frame, encoding: encoding, owed: owed)
      }
    } catch {
      // The call fails; its bytes still count against the connection's window.
      acknowledge(bytes.count, streamOpen: false)
      switch error {
      case .tooLarge(let announced, let limit):
        return RPCError(
          code: .resourceExhausted,
          message: "a request message of \(announced) bytes exceeds the server's limit of \(limit)")
      case .badFlag(let flag):
        return RPCError(code: .internalError, message: "a request's compressed flag is \(flag)")
      }
    }
    if encoding != .gzip,
      inbound.first?.frame.compressed == true || inbound.more.contains(where: \.frame.compressed)
    {
      acknowledge(bytes.count, streamOpen: false)
      return RPCError(
        code: .internalError,
        message: "a request message is compressed but grpc-encoding is not gzip")
    }
    acknowledge(inbound.partialBytes, streamOpen: true)
    guard let first = inbound.first else { return nil }
    owe(inbound.owedByMessages)
    // A waiting reader gets its request under the same lock that queued it, and its bytes
    // are acknowledged at once.
    let handed = withLocked {
      let handed = mailbox.deliver(first)
      if !inbound.more.isEmpty { _ = mailbox.deliver(inbound.more) }
      return handed
    }
    if let (reader, request) = handed {
      readerTook(request.owed)
      reader.resume(returning: request)
    }
    return nil
  }

  /// The client finished its request stream (END_STREAM).
  func requestsEnded() -> RPCError? {
    loop.checkInLoop()
    loop.checkOutsideCallbacks()
    if deframer.bufferedByteCount > 0 {
      return RPCError(
        code: .internalError, message: "the request stream ended inside a message")
    }
    let reader = withShared { s -> CheckedContinuation<QueuedRequest?, any Error>? in
      s.requestsFinished = true
      defer { mailbox.readerWaiting = nil }
      return mailbox.readerWaiting
    }
    reader?.resume(returning: nil)
    return nil
  }

  /// Ends the call early: the client reset it, the deadline passed, or the connection went.
  /// The handler's task is cancelled and its reads and writes throw `error`.
  func abort(_ error: RPCError) {
    end(error) {
      if shared.aborted == nil && shared.status == nil { shared.aborted = error }
    }
    sendBudget?.cancel(stream: id, error)
    handlerTask?.cancel()
  }

  /// The call's deadline (its `grpc-timeout`) passed: it ends with DEADLINE_EXCEEDED.
  func timerFired() {
    deadlineTimer = nil
    fail(RPCError(code: .deadlineExceeded, message: "the call's deadline passed on the server"))
  }

  /// The stream closed (reset, or its connection went): what it had queued will never be
  /// sent, and the requests it holds will never be read; the connection's send budget and
  /// its receive window get them back.
  func discardQueues() {
    loop.checkInLoop()
    let dropped = withLocked { () -> Int in
      // What the messages owe, read or not, is the core's account (released below).
      mailbox.removeMessages()
      _ = mailbox.takeCredit()
      return mailbox.removeUnsent()
    }
    sendBudget?.released(dropped)
    releaseOwed()
  }

  /// Under the core's lock, as the last pull of the body is made: the status and trailers
  /// then due (the handler's, or the abort's).
  override func bodyEnding() {
    trailersDue = shared.status ?? shared.aborted.map { ($0.status, Metadata()) }
  }

  /// After a pull of the response body (inside mem_send): the connection's ``SendBudget``
  /// gets the bytes back (the next writer waiting for it goes to `resume`), the connection
  /// hears that data went out, and once the body is over the trailers follow it.
  override func bodyPulled(
    _ pull: BodyPull, resume: inout [CheckedContinuation<Void, any Error>]
  ) {
    guard case .bytes(let count, _) = pull else { return }
    if let admitted = sendBudget?.releasing(count) { resume.append(admitted) }
    if count > 0 { session?.role?.responseDataSent() }
    if let (status, trailers) = trailersDue {
      trailersDue = nil
      submitTrailers(status: status, trailers: trailers)
    }
  }

  /// Whether the handler has finished and nothing of the body is left to send.
  var finishedWithoutBody: (Status, Metadata)? {
    withShared { s in
      guard mailbox.unsentCount == 0 else { return nil }
      if let status = s.status { return status }
      if let aborted = s.aborted { return (aborted.status, Metadata()) }
      return nil
    }
  }
}
