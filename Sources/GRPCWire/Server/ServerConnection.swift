internal import Logging
internal import CNGHTTP2
internal import Glibc

/// One accepted HTTP/2 connection of a ``GRPCServer``, owned by the server's event loop.
///
/// Like the client's connection it reads into nghttp2 and writes everything nghttp2 queued in
/// one tick with one write; it is only touched on `loop`. Each request stream becomes a
/// ``ServerStream`` whose handler runs as its own task.
final class ServerConnection: EventHandler, TickEndHandler, @unchecked Sendable {
  // @unchecked Sendable: loop-only; other threads reach it through loop.execute.

  let loop: EventLoop
  let peer: String
  /// Strong (weak references slow every retain and release of their target); let go of
  /// when the socket closes.
  var server: ServerCore?
  private var transport: (any ByteTransport)?
  private let fd: Int32
  private var session: OpaquePointer?
  private var streams: [Int32: ServerStream] = [:]
  /// Calls answered on the loop whose requests have all arrived, in arrival order: answered
  /// after mem_recv returns, outside nghttp2's callbacks.
  var readyOnLoop: [ServerStream] = []
  /// The request header block being received (HTTP/2 sends a block's frames back to back,
  /// so one buffer, kept between blocks, serves every stream).
  var headerBlock: [HeaderField] = []
  private var output = SessionOutput()
  private var flushScheduled = false
  private var interest: EventLoop.Interest = []
  private var draining = false
  /// The server is shutting down: the connection closes once its last call has ended.
  private var shuttingDown = false

  private var handshaking = false
  /// Queued response bytes of all streams (``ServerOptions/connectionSendBuffer``).
  let sendBudget: SendBudget
  private let options: ServerOptions
  /// Closes the connection unless the client's SETTINGS arrive first (``ServerOptions/handshakeTimeout``).
  private var handshakeTimer: TimerID?
  /// Closes the connection when it has had no call for ``ServerOptions/maxConnectionIdle``.
  private var idleTimer: TimerID?
  /// When the last frame from the client arrived (keepalive).
  private var lastFrameAt = MonotonicInstant.now
  /// Fires a keepalive interval after the last frame, or closes when our PING went unanswered.
  private var keepaliveTimer: TimerID?
  private var pingOutstanding = false
  /// Ping policing: when the client's last PING came, and its strikes since a response.
  private var lastClientPingAt: MonotonicInstant?
  private var pingStrikes = 0
  /// A final GOAWAY is queued: close once it is written.
  private var closeWhenFlushed = false
  /// The server's logger with the client's address (`grpc.peer`).
  private let logger: Logger

  /// `tls`: the server's TLS context, when it serves TLS (the handshake comes first).
  init(loop: EventLoop, fd: Int32, peer: String, server: ServerCore, tls: TLSContext?) throws(RPCError) {
    self.loop = loop
    self.fd = fd
    self.peer = peer
    self.server = server
    options = server.options
    var logger = server.logger
    logger[metadataKey: "grpc.peer"] = "\(peer)"
    self.logger = logger
    sendBudget = SendBudget(limit: options.connectionSendBuffer)
    if let tls {
      self.transport = try TLSTransport(acceptedFD: fd, context: tls, peer: peer)
      handshaking = true
    } else {
      self.transport = PlainTransport(fd: fd)
    }
  }

  deinit {
    if let session { nghttp2_session_del(session) }
  }

  var openCallCount: Int { streams.count }

  /// Starts serving: the TLS handshake if there is one, then the HTTP/2 session.
  func start() {
    loop.assertInLoop()
    // Strong: closing the socket cancels the timer.
    logger.debug("connection accepted")
    handshakeTimer = loop.scheduleTimer(at: .now.advanced(by: options.handshakeTimeout)) { [self] in
      handshakeTimer = nil
      logger.debug("handshake timed out: TLS, preface or SETTINGS unfinished")
      closeSocket()
    }
    armIdleTimer()
    armKeepalive(after: options.keepaliveInterval)
    if let age = options.maxConnectionAge {
      // Weak: the connection may be long gone when its age comes.
      _ = loop.scheduleTimer(at: .now.advanced(by: age)) { [weak self] in self?.reachedMaxAge() }
    }
    if handshaking {
      continueHandshake()
    } else {
      startSession()
    }
  }

  private func continueHandshake() {
    guard let transport else { return }
    switch transport.handshake() {
    case .done:
      handshaking = false
      startSession()
    case .wantRead: setInterest(.read)
    case .wantWrite: setInterest(.write)
    case .failed(let error):
      logger.debug("TLS handshake failed", metadata: ["grpc.error": "\(error.message)"])
      closeSocket()
    }
  }

  /// Our SETTINGS go out at once.
  private func startSession() {
    session = makeServerSession(userData: Unmanaged.passUnretained(self).toOpaque())
    let entries = [
      nghttp2_settings_entry(
        settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
        value: UInt32(clamping: options.maxConcurrentStreams)),
      nghttp2_settings_entry(
        settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 4 << 20),
    ]
    guard
      nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), entries, entries.count) == 0,
      nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 16 << 20) == 0
    else { return closeSocket() }
    setInterest(.read)
    scheduleFlush()
  }

  // MARK: Requests (from nghttp2's callbacks, inside mem_recv)

  func beginStream(_ id: Int32) {
    if let idleTimer {
      loop.cancelTimer(idleTimer)
      self.idleTimer = nil
    }
    let stream = ServerStream(loop: loop, id: id)
    stream.connection = self
    streams[id] = stream
  }

  func stream(_ id: Int32) -> ServerStream? { streams[id] }

  /// A DATA frame of fewer than 5 bytes that did not end the stream: past
  /// ``ServerOptions/maxTinyFramesPerStream`` of them on one stream, the connection ends with
  /// ENHANCE_YOUR_CALM.
  func tinyDataFrameReceived(_ stream: ServerStream) {
    stream.tinyFrames += 1
    guard stream.tinyFrames > options.maxTinyFramesPerStream, let session else { return }
    logger.notice(
      "too many tiny DATA frames: GOAWAY ENHANCE_YOUR_CALM",
      metadata: ["grpc.stream_id": "\(stream.id)", "grpc.frames": "\(stream.tinyFrames)"])
    // Inside mem_recv: nghttp2 sends the GOAWAY and stops reading; the flush then closes.
    // Out of memory even for that: close without it, once mem_recv has returned.
    if nghttp2_session_terminate_session(session, HTTP2ErrorCode.enhanceYourCalm) != 0 {
      loop.execute { [weak self] in self?.closeSocket() }
    }
  }

  // MARK: Keepalive and ping policing (inside mem_recv, or timers)

  func frameReceived() { lastFrameAt = .now }

  /// A PING from the client (nghttp2 answers it): too many too close together end the
  /// connection.
  func pingReceived() {
    let now = MonotonicInstant.now
    defer { lastClientPingAt = now }
    guard let last = lastClientPingAt, now < last.advanced(by: options.minPingInterval) else { return }
    pingStrikes += 1
    guard pingStrikes > options.maxPingStrikes, let session else { return }
    logger.notice("too many PINGs: GOAWAY ENHANCE_YOUR_CALM too_many_pings")
    // gRPC's client keepalive (A8) reads this debug data and doubles its interval.
    let debug = Array("too_many_pings".utf8)
    let sent = nghttp2_submit_goaway(
      session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nghttp2_session_get_last_proc_stream_id(session),
      HTTP2ErrorCode.enhanceYourCalm, debug, debug.count)
    // Without the GOAWAY queued, end the session at once (nghttp2 then stops reading).
    if sent != 0 { nghttp2_session_terminate_session(session, HTTP2ErrorCode.enhanceYourCalm) }
    closeWhenFlushed = true
  }

  func pingAcknowledged() { pingOutstanding = false }

  /// Response data went out: PINGs that follow are fair (a client measuring bandwidth PINGs
  /// as data arrives), so the strikes start again, as gRPC servers count them.
  func responseDataSent() { pingStrikes = 0 }

  /// Checks for a silent client `delay` from now: PING it if nothing came for an interval.
  private func armKeepalive(after delay: Duration?) {
    guard let delay, transport != nil else { return }
    // Weak: the connection may close first; the timer then finds nothing to do.
    keepaliveTimer = loop.scheduleTimer(at: .now.advanced(by: delay)) { [weak self] in
      self?.keepaliveDue()
    }
  }

  private func keepaliveDue() {
    keepaliveTimer = nil
    guard let interval = options.keepaliveInterval, let session, transport != nil else { return }
    if pingOutstanding {
      // The PING sent a timeout ago is still unanswered: the client is gone.
      logger.debug("keepalive PING unanswered: closing the connection")
      return closeSocket()
    }
    let due = lastFrameAt.advanced(by: interval)
    if MonotonicInstant.now < due {
      return armKeepalive(after: .nanoseconds(Int64(due.nanoseconds - MonotonicInstant.now.nanoseconds)))
    }
    pingOutstanding = true
    guard nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil) == 0 else {
      return closeSocket()
    }
    scheduleFlush()
    armKeepalive(after: options.keepaliveTimeout)
  }

  /// With ``ServerOptions/maxConnectionIdle``: closes the connection if no call starts in time.
  private func armIdleTimer() {
    guard let idle = options.maxConnectionIdle, idleTimer == nil, transport != nil else { return }
    // Strong: the timer is cancelled when a call starts or the socket closes.
    idleTimer = loop.scheduleTimer(at: .now.advanced(by: idle)) { [self] in
      idleTimer = nil
      guard streams.isEmpty else { return }
      beginDraining()
      closeIfDrained()
    }
  }

  /// ``ServerOptions/maxConnectionAge`` passed: GOAWAY, and the grace period for the calls.
  private func reachedMaxAge() {
    guard transport != nil else { return }
    beginDraining()
    closeIfDrained()
    if let grace = options.maxConnectionAgeGrace {
      _ = loop.scheduleTimer(at: .now.advanced(by: grace)) { [weak self] in
        guard let self, let session = self.session else { return }
        // The calls still open end with the connection (UNAVAILABLE to their clients), not
        // each with a reset: CANCEL would read as the client's own doing.
        // Closing regardless: the GOAWAY is a courtesy here.
        _ = nghttp2_session_terminate_session(session, HTTP2ErrorCode.noError)
        self.flush()
        self.closeSocket()
      }
    }
  }

  /// The client's first SETTINGS (after its preface, which nghttp2 checked): the handshake is
  /// over.
  func clientSettingsReceived() {
    guard let handshakeTimer else { return }
    loop.cancelTimer(handshakeTimer)
    self.handshakeTimer = nil
  }

  func requestHeadersReceived(_ stream: ServerStream, endStream: Bool) {
    guard let server else { return }
    let fields = headerBlock
    var method = "", path = "", contentType = "", timeout: Duration? = nil
    var malformedTimeout: String? = nil
    for field in fields {
      switch field.name {
      case ":method": method = field.value
      case ":path": path = field.value
      case "content-type": contentType = field.value
      case "grpc-timeout":
        timeout = GRPCTimeout.parse(field.value)
        if timeout == nil { malformedTimeout = field.value }
      case "grpc-encoding":
        switch field.value {
        case "identity": stream.requestEncoding = .identity
        case "gzip": stream.requestEncoding = .gzip
        default: stream.requestEncoding = .unsupported(field.value)
        }
      case "grpc-accept-encoding":
        stream.acceptsGzip = Self.listsGzip(field.value)
      default: continue
      }
    }
    guard method == "POST" else {
      return respondEarly(stream, Status(code: .unimplemented, message: "gRPC needs POST, not \(method)"), httpStatus: 405)
    }
    guard contentType.hasPrefix("application/grpc") else {
      return respondEarly(
        stream, Status(code: .internalError, message: "content-type '\(contentType)' is not gRPC"),
        httpStatus: 415)
    }
    if case .unsupported(let name) = stream.requestEncoding {
      return respondEarly(
        stream,
        Status(code: .unimplemented, message: "this server does not support grpc-encoding '\(name)'"))
    }
    guard let handler = server.handler(for: path) else {
      return respondEarly(stream, Status(code: .unimplemented, message: "unknown method \(path)"))
    }
    // PROTOCOL-HTTP2.md: at most 8 digits and one unit. A value we cannot read is not
    // silently dropped (the call would run with no deadline); a zero one has already passed.
    if let malformedTimeout {
      return respondEarly(
        stream,
        Status(code: .internalError, message: "malformed grpc-timeout '\(malformedTimeout.prefix(32))'"))
    }
    if timeout == .zero {
      return respondEarly(
        stream, Status(code: .deadlineExceeded, message: "the call's deadline passed before it reached the server"))
    }
    stream.deframer = MessageDeframer(maxMessageSize: server.maxReceiveMessageSize)
    stream.maxSendMessageSize = server.options.maxSendMessageSize
    stream.maxRequestSize = server.maxReceiveMessageSize
    stream.outboundLimit = server.options.streamSendBuffer
    stream.sendBudget = sendBudget
    let loop = self.loop
    let context = ServerContext(
      path: path,
      requestMetadata: Metadata(receivedHeaders: fields.lazy.map { (name: $0.name, value: $0.value) }),
      timeout: timeout, peer: peer, maxSendMessageSize: server.options.maxSendMessageSize,
      dropConnection: { [self] in
        // Strong: the context lives in the stream, which this connection lets go of when the
        // stream closes.
        loop.execute { self.drop() }
      })
    stream.context = context
    if let timeout {
      // The timer holds the stream until it is cancelled, when the call ends
      // (finishResponse, abort).
      stream.deadlineTimer = loop.scheduleTimer(at: .now.advanced(by: timeout), target: stream)
    }
    switch handler {
    case .task(let handler):
      let executor: (any TaskExecutor)? = server.options.handlersRunOnEventLoop ? loop : nil
      stream.handlerTask = Task(executorPreference: executor) {
        await handler(stream, context)
      }
    case .onLoop(let handler):
      stream.loopHandler = handler
    }
    if endStream { endRequests(stream) }
  }

  /// Whether a `grpc-accept-encoding` value (comma-separated names, spaces allowed around
  /// them) lists gzip. Read byte by byte: it is parsed on every call.
  static func listsGzip(_ list: String) -> Bool {
    if list == "identity,gzip" { return true }
    var list = list
    return list.withUTF8 { bytes in
      var start = 0
      while start <= bytes.count {
        var end = start
        while end < bytes.count && bytes[end] != UInt8(ascii: ",") { end += 1 }
        var low = start, high = end
        while low < high && bytes[low] == UInt8(ascii: " ") { low += 1 }
        while high > low && bytes[high - 1] == UInt8(ascii: " ") { high -= 1 }
        if high - low == 4 && bytes[low] == UInt8(ascii: "g") && bytes[low + 1] == UInt8(ascii: "z")
          && bytes[low + 2] == UInt8(ascii: "i") && bytes[low + 3] == UInt8(ascii: "p")
        {
          return true
        }
        start = end + 1
      }
      return false
    }
  }

  /// Acknowledges `count` request bytes read (or dropped): the client may send as many more.
  func consume(streamID: Int32, _ count: Int, streamOpen: Bool) {
    loop.assertInLoop()
    guard let session, count > 0 else { return }
    ReceiveCredit.acknowledge(
      count, streamID: streamID, streamOpen: streamOpen && streams[streamID] != nil, in: session)
    scheduleFlush()
  }

  func dataReceived(_ stream: ServerStream, _ bytes: UnsafeRawBufferPointer) {
    // Answered already (refused, or the handler is done): nothing will read what comes.
    guard !stream.ignoresRequests else {
      return consume(streamID: stream.id, bytes.count, streamOpen: true)
    }
    if let error = stream.receivedData(bytes) { fail(stream, error) }
  }

  func requestStreamEnded(_ stream: ServerStream) {
    endRequests(stream)
  }

  /// The client finished its request stream: a call answered on the loop is answered once
  /// mem_recv has returned (``answerReadyCalls()``).
  private func endRequests(_ stream: ServerStream) {
    if let error = stream.requestsEnded() { return fail(stream, error) }
    if stream.loopHandler != nil { readyOnLoop.append(stream) }
  }

  func streamClosed(_ id: Int32, errorCode: UInt32) {
    guard let stream = streams.removeValue(forKey: id) else { return }
    stream.streamClosed = true
    // Closed before the handler finished: the client reset it (or the connection ended).
    stream.abort(RPCError(code: .cancelled, message: "the client cancelled the call"))
    stream.discardQueues()
    guard streams.isEmpty else { return }
    armIdleTimer()
    // Inside nghttp2's stream-close callback: close once it has returned. A server shutting
    // down closes with a final GOAWAY; a draining connection (shutting down drains too)
    // closes once its own GOAWAY has gone.
    if shuttingDown {
      loop.execute { [weak self] in
        self?.close(cancelling: RPCError(code: .unavailable, message: "the server is shutting down"))
      }
    } else if draining {
      loop.execute { [weak self] in self?.closeIfDrained() }
    }
  }

  /// A request broke the rules: answer with `error`'s status and stop the handler.
  private func fail(_ stream: ServerStream, _ error: RPCError) {
    stream.abort(error)
    finishResponse(of: stream)
  }

  /// Answers at once with `status` and no handler (trailers-only).
  private func respondEarly(_ stream: ServerStream, _ status: Status, httpStatus: Int = 200) {
    stream.responseStarted = true
    stream.ignoresRequests = true
    var fields = [
      HeaderField(name: ":status", value: "\(httpStatus)"),
      HeaderField(name: "content-type", value: "application/grpc"),
      // compression.md: an UNIMPLEMENTED for an unknown grpc-encoding says what we accept.
      HeaderField(name: "grpc-accept-encoding", value: "identity,gzip"),
    ]
    fields.append(pairs: status.headerFields())
    let submitted = HeaderBlock.withNameValues(fields) { nva, count in
      nghttp2_submit_response(session, stream.id, nva, count, nil)
    }
    checkSubmitted(submitted, stream)
  }

  // MARK: Responses (loop)

  func compressionAllowed(for stream: ServerStream) -> Bool {
    stream.acceptsGzip && (stream.context?.compressResponses ?? false)
  }

  func responseBytesQueued(for stream: ServerStream) {
    loop.assertInLoop()
    guard !stream.streamClosed, let session else { return }
    if !stream.responseStarted {
      startResponse(stream)
    } else if stream.dataDeferred {
      stream.dataDeferred = false
      checkSubmitted(nghttp2_session_resume_data(session, stream.id), stream)
    }
  }

  /// The handler finished (or the call was aborted): status and trailers follow the body.
  func finishResponse(of stream: ServerStream) {
    loop.assertInLoop()
    guard !stream.streamClosed, session != nil else { return }
    stream.ignoresRequests = true
    if let deadlineTimer = stream.deadlineTimer {
      loop.cancelTimer(deadlineTimer)
      stream.deadlineTimer = nil
    }
    if !stream.responseStarted, let (status, trailers) = stream.finishedWithoutBody {
      // Nothing was sent: a trailers-only response carries status and metadata together.
      var metadata = stream.context?.initialMetadata ?? Metadata()
      metadata.add(contentsOf: trailers)
      respondEarly(stream, status, metadata: metadata)
      return
    }
    responseBytesQueued(for: stream)
  }

  private func respondEarly(_ stream: ServerStream, _ status: Status, metadata: Metadata) {
    stream.responseStarted = true
    var fields = [
      HeaderField(name: ":status", value: "200"),
      HeaderField(name: "content-type", value: "application/grpc"),
    ]
    fields.append(pairs: status.headerFields())
    fields.append(pairs: metadata.headerFields())
    let submitted = HeaderBlock.withNameValues(fields) { nva, count in
      nghttp2_submit_response(session, stream.id, nva, count, nil)
    }
    checkSubmitted(submitted, stream)
  }

  private func startResponse(_ stream: ServerStream) {
    stream.responseStarted = true
    pingStrikes = 0
    var fields = [
      HeaderField(name: ":status", value: "200"),
      HeaderField(name: "content-type", value: "application/grpc"),
      HeaderField(name: "grpc-accept-encoding", value: "identity,gzip"),
    ]
    if stream.acceptsGzip { fields.append(HeaderField(name: "grpc-encoding", value: "gzip")) }
    fields.append(pairs: (stream.context?.initialMetadata ?? Metadata()).headerFields())
    var provider = nghttp2_data_provider()
    provider.source.ptr = Unmanaged.passUnretained(stream).toOpaque()
    provider.read_callback = onServerDataSourceRead
    let submitted = HeaderBlock.withNameValues(fields) { nva, count in
      nghttp2_submit_response(session, stream.id, nva, count, &provider)
    }
    checkSubmitted(submitted, stream)
  }

  /// Called from the data provider once the body is over: the trailers.
  func submitTrailers(for stream: ServerStream, status: Status, trailers: Metadata) {
    var fields: [HeaderField] = []
    fields.append(pairs: status.headerFields())
    fields.append(pairs: trailers.headerFields())
    let submitted = HeaderBlock.withNameValues(fields) { nva, count in
      nghttp2_submit_trailer(session, stream.id, nva, count)
    }
    checkSubmitted(submitted, stream)
  }

  /// A response part nghttp2 refused (out of memory, or fields it will not send): the call
  /// cannot be answered as it is, so it is reset with INTERNAL_ERROR; if even that fails,
  /// the connection goes.
  private func checkSubmitted(_ result: Int32, _ stream: ServerStream) {
    scheduleFlush()
    guard result != 0, let session else { return }
    let reset = nghttp2_submit_rst_stream(
      session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, HTTP2ErrorCode.internalError)
    if reset != 0 { loop.execute { [weak self] in self?.closeSocket() } }
  }

  // MARK: Shutdown (loop)

  /// GOAWAY: no new streams; the ones in flight may finish, then the connection closes.
  ///
  /// As RFC 9113 §6.8 suggests, first a notice (last stream ID 2^31-1), then, a moment later
  /// so that streams already on their way are counted, the real GOAWAY naming the last
  /// stream we took. Clients retry anything above it on a new connection.
  func beginDraining() {
    guard let session, !draining else { return }
    draining = true
    logger.debug("draining: GOAWAY", metadata: ["grpc.open_calls": "\(streams.count)"])
    guard nghttp2_submit_shutdown_notice(session) == 0 else { return closeSocket() }
    scheduleFlush()
    _ = loop.scheduleTimer(at: .now.advanced(by: .milliseconds(100))) { [weak self] in
      guard let self, let session = self.session else { return }
      let sent = nghttp2_submit_goaway(
        session, UInt8(NGHTTP2_FLAG_NONE.rawValue),
        nghttp2_session_get_last_proc_stream_id(session), HTTP2ErrorCode.noError, nil, 0)
      guard sent == 0 else { return self.closeSocket() }
      self.scheduleFlush()
      self.closeIfDrained()
    }
  }

  /// The server shuts down: with no call open the connection closes now (a final GOAWAY);
  /// otherwise it drains, and closes when its last call ends (or the server's grace period
  /// does).
  func serverShuttingDown(_ error: RPCError) {
    loop.assertInLoop()
    shuttingDown = true
    if streams.isEmpty {
      close(cancelling: error)
    } else {
      beginDraining()
    }
  }

  /// A draining connection closes once its last call is done.
  func closeIfDrained() {
    guard draining, streams.isEmpty, transport != nil else { return }
    flush()
    closeSocket()
  }

  /// Closes the socket at once, without GOAWAY: calls in flight see the connection drop
  /// (fault injection).
  func drop() {
    loop.assertInLoop()
    closeSocket()
  }

  /// Ends every call and the connection (final GOAWAY, then close).
  func close(cancelling error: RPCError) {
    for stream in streams.values {
      stream.abort(error)
      // Tell the client too, before the GOAWAY (after it nghttp2 would drop the reset).
      // Best effort: the connection closes below whether or not the reset could be queued.
      if let session {
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, HTTP2ErrorCode.cancel)
      }
    }
    flush()
    // Closing regardless: the GOAWAY is a courtesy here.
    if let session, nghttp2_session_terminate_session(session, HTTP2ErrorCode.noError) == 0 {
      flush()
    }
    closeSocket()
  }

  // MARK: I/O

  func readable() {
    if handshaking { return continueHandshake() }
    guard let transport, let session else { return }
    let budget = ReadBudget.server
    let readBuffer = UnsafeMutableRawBufferPointer(rebasing: loop.readBuffer[..<budget.bytes])
    for _ in 0..<budget.reads {
      switch transport.read(into: readBuffer) {
      case .bytes(let count):
        let consumed = nghttp2_session_mem_recv(
          session, readBuffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count)
        if consumed < 0 {
          logger.info(
            "the client broke HTTP/2: GOAWAY", metadata: ["grpc.error": "\(nghttp2Error(Int32(consumed)))"])
          flush()
          closeSocket()
          return
        }
        answerReadyCalls()
        if count < readBuffer.count { return scheduleFlush() }
      case .wouldBlock(let wantWrite):
        if wantWrite { setInterest([.read, .write]) }
        return scheduleFlush()
      case .closed, .failed:
        closeSocket()
        return
      }
    }
    scheduleFlush()
  }

  func writable() {
    if handshaking { return continueHandshake() }
    flush()
  }

  func loopClosing() { closeSocket() }

  func tickEnded() {
    flushScheduled = false
    flush()
  }

  private func scheduleFlush() {
    guard !flushScheduled, transport != nil else { return }
    flushScheduled = true
    loop.runAtEndOfTick(self)
  }

  private func flush() {
    guard let session, let transport else { return }
    switch output.flush(session, through: transport) {
    case .drained:
      if closeWhenFlushed { return closeSocket() }
    case .wouldBlock(let wantWrite):
      setInterest(wantWrite ? [.read, .write] : .read)
      return
    case .closed, .writeFailed, .sessionFailed:
      closeSocket()
      return
    }
    setInterest(.read)
    if nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 {
      closeSocket()
    }
  }

  private func setInterest(_ wanted: EventLoop.Interest) {
    guard transport != nil else { return }
    loop.changeInterest(fd, from: &interest, to: wanted, self)
  }

  private func closeSocket() {
    guard let transport else { return }
    handshaking = false
    if let handshakeTimer {
      loop.cancelTimer(handshakeTimer)
      self.handshakeTimer = nil
    }
    if let idleTimer {
      loop.cancelTimer(idleTimer)
      self.idleTimer = nil
    }
    if let keepaliveTimer {
      loop.cancelTimer(keepaliveTimer)
      self.keepaliveTimer = nil
    }
    setInterest([])
    self.transport = nil
    transport.close()
    logger.debug("connection closed", metadata: ["grpc.open_calls": "\(streams.count)"])
    let open = streams
    streams.removeAll()
    readyOnLoop.removeAll()
    for stream in open.values {
      stream.streamClosed = true
      stream.abort(RPCError(code: .unavailable, message: "the connection from \(peer) was lost"))
      stream.discardQueues()
    }
    if let session {
      nghttp2_session_del(session)
      self.session = nil
    }
    let server = self.server
    self.server = nil
    server?.connectionClosed(self)
  }
}

extension [HeaderField] {
  /// Appends `Status` or `Metadata` header fields in place, without a mapped array between.
  fileprivate mutating func append(pairs: [(name: String, value: String)]) {
    for pair in pairs { append(HeaderField(name: pair.name, value: pair.value)) }
  }
}
