internal import FleetSync

/// One call arriving at a server: its HTTP/2 stream as the connection's loop sees it, and its
/// request and response queues as the handler's task sees them.
///
/// Loop-only: `core` (the state machine, request deframer, deadline timer), the handler
/// task. Shared (decided under `shared`'s lock, acted on outside it): request messages for
/// the handler, framed response bytes for nghttp2's data provider, the final status.
///
/// Response headers are sent lazily — with the first message, or with the status — so a call
/// that fails before answering becomes a trailers-only response, as gRPC servers send.
final class ServerStream: StreamRole, TimerTarget, @unchecked Sendable {
  // @unchecked Sendable: immutable lets, a PosixMutex, and loop-only vars (see above).

  let loop: EventLoop
  let id: Int32
  /// The session the stream arrived on, set once as it begins: what it acknowledges request
  /// bytes and submits its response through (``ServerStream+Response``); the connection's
  /// part (ping strikes, a reset nghttp2 cannot queue) the session asks of its role. Strong,
  /// not weak (a weak reference gives the session a side table, after which every retain and
  /// release of it takes the runtime's slow path); the session holds no stream.
  var session: HTTP2Session?

  // MARK: Loop-only
  var acceptsGzip = false
  /// What both roles' streams keep alike: the state machine (server configuration: request
  /// headers checked, answered, closed), the deframer, the bytes owed, the deadline timer
  /// (see ``StreamRole``).
  var core = StreamCore(.server(), maxReceiveSize: 4 << 20)
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
  struct QueuedRequest: MailboxMessage {
    var frame: MessageDeframer.Frame
    /// Its bytes that arrived in the chunk that completed it (those of earlier chunks were
    /// acknowledged as they came, to let the rest of a large message in).
    var owed: Int
    var payloadCount: Int { frame.payload.count }
    static var taken: Self { Self(frame: .init(compressed: false, payload: []), owed: 0) }
  }

  // MARK: Shared
  let shared: PosixMutex<Shared>

  struct Shared: StreamShared {
    /// Requests for the handler, response bytes for nghttp2.
    var mailbox: StreamMailbox<QueuedRequest>
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
    self.loop = loop
    self.id = id
    self.outboundLimit = outboundLimit
    shared = PosixMutex(Shared(mailbox: StreamMailbox(outboundLimit: outboundLimit)))
  }

  /// Runs `body` on the shared state, under its lock.
  @inline(__always)
  func withShared<T>(_ body: (inout Shared) -> T) -> T { shared.withLock(body) }

  /// Acknowledges `count` request bytes through the session (see ``StreamRole``): for the
  /// stream too when `streamOpen` (callers pass it only while the machine is open) and nghttp2
  /// still has the stream, else for the connection only.
  func acknowledge(_ count: Int, streamOpen: Bool) {
    session?.acknowledge(count, streamID: id, streamOpen: streamOpen)
  }

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
      inbound = try core.receive(bytes) { frame, owed in QueuedRequest(frame: frame, owed: owed) }
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
    core.owe(inbound.owedByMessages)
    // A waiting reader gets its request under the same lock that queued it, and its bytes
    // are acknowledged at once.
    let handed = shared.withLock { s in
      let handed = s.mailbox.deliver(first)
      if !inbound.more.isEmpty { _ = s.mailbox.deliver(inbound.more) }
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
    if core.deframer.bufferedByteCount > 0 {
      return RPCError(
        code: .internalError, message: "the request stream ended inside a message")
    }
    let reader = shared.withLock { s -> CheckedContinuation<QueuedRequest?, any Error>? in
      s.requestsFinished = true
      defer { s.mailbox.readerWaiting = nil }
      return s.mailbox.readerWaiting
    }
    reader?.resume(returning: nil)
    return nil
  }

  /// Ends the call early: the client reset it, the deadline passed, or the connection went.
  /// The handler's task is cancelled and its reads and writes throw `error`.
  func abort(_ error: RPCError) {
    end(error) { s in
      if s.aborted == nil && s.status == nil { s.aborted = error }
    }
    sendBudget?.cancel(stream: id, error)
    handlerTask?.cancel()
  }

  /// The call's deadline (its `grpc-timeout`) passed: it ends with DEADLINE_EXCEEDED.
  func timerFired() {
    core.deadlineTimer = nil
    fail(RPCError(code: .deadlineExceeded, message: "the call's deadline passed on the server"))
  }

  /// The stream closed (reset, or its connection went): what it had queued will never be
  /// sent, and the requests it holds will never be read; the connection's send budget and
  /// its receive window get them back.
  func discardQueues() {
    loop.checkInLoop()
    let dropped = shared.withLock { s -> Int in
      // What the messages owe, read or not, is the core's account (released below).
      s.mailbox.removeMessages()
      _ = s.mailbox.takeCredit()
      return s.mailbox.removeUnsent()
    }
    sendBudget?.released(dropped)
    releaseOwed()
  }

  /// The response body, for nghttp2's data provider (inside mem_send): response bytes
  /// copied into `buffer`, the last once the handler is done (or the call aborted), with the
  /// status and trailers then due. The writers the copy made room for (this stream's, and the
  /// next one waiting for the connection's ``SendBudget``) go to `resume`.
  func pullBody(
    into buffer: UnsafeMutableRawBufferPointer,
    resume: inout [CheckedContinuation<Void, any Error>]
  ) -> (pull: BodyPull, end: (Status, Metadata)?) {
    let (pull, end) = pullQueued(into: buffer, resume: &resume) { s in
      s.status ?? s.aborted.map { ($0.status, Metadata()) }
    }
    if case .bytes(let count, _) = pull, let admitted = sendBudget?.releasing(count) {
      resume.append(admitted)
    }
    return (pull, end)
  }

  /// Whether the handler has finished and nothing of the body is left to send.
  var finishedWithoutBody: (Status, Metadata)? {
    shared.withLock { s in
      guard s.mailbox.unsentCount == 0 else { return nil }
      if let status = s.status { return status }
      if let aborted = s.aborted { return (aborted.status, Metadata()) }
      return nil
    }
  }
}
