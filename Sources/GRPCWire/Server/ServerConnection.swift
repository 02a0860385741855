internal import Logging
internal import CNGHTTP2
internal import Glibc

/// One accepted HTTP/2 connection of a ``GRPCServer``, owned by the server's event loop.
///
/// The server's role over an ``HTTP2Session`` (the same session type as the client's, which
/// reads into nghttp2 and writes everything queued in one tick with one write); it is only
/// touched on `loop`. Each request stream becomes a ``ServerStream`` whose handler runs as
/// its own task or on the loop. Requests, responses and keepalive are in
/// `ServerConnection+*.swift`.
final class ServerConnection: HTTP2SessionRole {
  // Not Sendable: loop-only. Other threads (the server's core on another loop) hold it as a
  // LoopBound and reach it through its loop's queue.

  let loop: EventLoop
  let peer: String
  /// The client's address without its port: the key of its glitch bucket.
  let peerAddress: String
  /// Strong (weak references slow every retain and release of their target); let go of
  /// when the socket closes.
  var server: ServerShared?
  /// The socket, transport and nghttp2 session.
  let session: HTTP2Session
  /// Calls answered on the loop whose requests have all arrived, in arrival order: answered
  /// after mem_recv returns, outside nghttp2's callbacks.
  var readyOnLoop: [ServerStream] = []
  /// Handshaking, serving, draining, closed: see the machine.
  var machine: ServerConnectionStateMachine
  /// Queued response bytes of all streams (``ServerOptions/connectionSendBuffer``).
  let sendBudget: SendBudget
  let options: ServerOptions
  /// Closes the connection unless the client's SETTINGS arrive first (``ServerOptions/handshakeTimeout``).
  var handshakeTimer: TimerID?
  /// Closes the connection when it has had no call for ``ServerOptions/maxConnectionIdle``.
  var idleTimer: TimerID?
  /// When the last frame from the client arrived (keepalive).
  var lastFrameAt = MonotonicInstant.now
  /// Fires a keepalive interval after the last frame, or closes when our PING went unanswered.
  var keepaliveTimer: TimerID?
  /// ``ServerOptions/maxConnectionAge``, then its grace period.
  var ageTimer: TimerID?
  /// The final GOAWAY, a moment after the drain notice.
  var goAwayTimer: TimerID?
  var pingOutstanding = false
  /// Ping policing: when the client's last PING came, and its strikes since a response.
  var lastClientPingAt: MonotonicInstant?
  var pingStrikes = 0
  /// The glitches the client may still cause (``ServerOptions/glitchLimit``); nil: no limit.
  var glitches: GlitchLimiter?
  /// See ``HTTP2SessionRole/readSlice``: a whole read, until the client glitches.
  var readSlice = Int.max
  /// The server's logger with the client's address (`grpc.peer`).
  let logger: Logger

  /// `tls`: the server's TLS context, when it serves TLS (the handshake comes first).
  init(
    loop: EventLoop, fd: Int32, peer: String, server: ServerShared, tls: TLSContext?
  ) throws(RPCError) {
    self.loop = loop
    self.peer = peer
    peerAddress = Self.address(ofPeer: peer)
    self.server = server
    options = server.options
    var logger = server.logger
    logger[metadataKey: "grpc.peer"] = "\(peer)"
    self.logger = logger
    sendBudget = SendBudget(limit: options.connectionSendBuffer)
    let now = MonotonicInstant.now.nanoseconds
    glitches = options.glitchLimit.map { GlitchLimiter($0, now: now) }
    // A client whose address has no glitch left: read a little at a time from its first byte.
    if server.peerGlitches?.isEmpty(peerAddress, now: now) == true {
      readSlice = Self.glitchingReadSlice
    }
    session = HTTP2Session(loop: loop, fd: fd)
    machine = ServerConnectionStateMachine(tls: tls != nil)
    if let tls {
      session.transport = try TLSTransport(acceptedFD: fd, context: tls, peer: peer)
    } else {
      session.transport = PlainTransport(fd: fd)
    }
    session.role = self
  }

  deinit {
    // Its streams hold the session (to acknowledge and answer through), which holds its role
    // unowned. closeSocket ends the session and clears the role on the loop; the last release
    // may come later on another thread (the server's core), so a closed connection touches
    // nothing here. One let go unclosed, as its loop stopped, ends its session first, so that
    // nothing reaches the role through it.
    guard session.nghttp2 != nil else { return }
    session.role = nil
    session.end()
  }

  var openCallCount: Int { session.streams.count }

  /// Starts serving: the TLS handshake if there is one, then the HTTP/2 session.
  func start() {
    loop.checkInLoop()
    // Every timer of the connection holds it strongly and is cancelled when the socket closes.
    // Never `[weak self]`: one weak reference gives the object a side table for good, and
    // then every retain and release of it (several per call, from nghttp2's callbacks) takes
    // the runtime's slow path — about 9 % of fleet-sim's CPU when this was measured.
    logger.debug("connection accepted")
    handshakeTimer = loop.scheduleTimer(at: .now.advanced(by: options.handshakeTimeout)) { [self] in
      handshakeTimer = nil
      logger.debug("handshake timed out: TLS, preface or SETTINGS unfinished")
      closeSocket()
    }
    armIdleTimer()
    armKeepalive(after: options.keepaliveInterval)
    if let age = options.maxConnectionAge {
      ageTimer = loop.scheduleTimer(at: .now.advanced(by: age)) { [self] in
        ageTimer = nil
        reachedMaxAge()
      }
    }
    if machine.isHandshaking {
      continueHandshake()
    } else {
      startSession()
    }
  }

  func continueHandshake() {
    guard let transport = session.transport else { return }
    switch transport.handshake() {
    case .done:
      if machine.handshakeDone() { startSession() }
    case .wantRead: setInterest(.read)
    case .wantWrite: setInterest(.write)
    case .failed(let error):
      logger.debug("TLS handshake failed", metadata: ["grpc.error": "\(error.message)"])
      closeSocket()
    }
  }

  /// Our SETTINGS go out at once.
  func startSession() {
    guard session.start(.server, settings: .server(maxConcurrentStreams: options.maxConcurrentStreams))
    else { return closeSocket() }
    setInterest(.read)
    scheduleFlush()
  }

  // MARK: Shutdown (loop)

  /// GOAWAY: no new streams; the ones in flight may finish, then the connection closes.
  ///
  /// As RFC 9113 §6.8 suggests, first a notice (last stream ID 2^31-1), then, a moment later
  /// so that streams already on their way are counted, the real GOAWAY naming the last
  /// stream we took. Clients retry anything above it on a new connection.
  func beginDraining() {
    guard session.nghttp2 != nil, machine.beginDraining(), let nghttp2 = session.nghttp2 else { return }
    logger.debug("draining: GOAWAY", metadata: ["grpc.open_calls": "\(session.streams.count)"])
    guard nghttp2_submit_shutdown_notice(nghttp2) == 0 else { return closeSocket() }
    scheduleFlush()
    goAwayTimer = loop.scheduleTimer(at: .now.advanced(by: .milliseconds(100))) { [self] in
      goAwayTimer = nil
      guard let nghttp2 = session.nghttp2 else { return }
      let last = nghttp2_session_get_last_proc_stream_id(nghttp2)
      let sent = nghttp2_submit_goaway(
        nghttp2, UInt8(NGHTTP2_FLAG_NONE.rawValue), last, HTTP2ErrorCode.noError, nil, 0)
      guard sent == 0 else { return closeSocket() }
      machine.lastStreamAnnounced()
      logger.debug(
        "draining: final GOAWAY",
        metadata: ["grpc.last_stream": "\(last)", "grpc.open_calls": "\(session.streams.count)"])
      scheduleFlush()
      closeIfDrained()
    }
  }

  /// The server shuts down: with no call open the connection ends now (``closeOnceWritten()``);
  /// otherwise it drains, and ends when its last call does (or the server's grace period
  /// does).
  func serverShuttingDown() {
    loop.checkInLoop()
    if machine.serverShuttingDown(openCalls: session.streams.count) {
      beginDraining()
    } else {
      closeOnceWritten()
    }
  }

  /// No call is open and the server shuts down: the final GOAWAY is queued, and the connection
  /// closes once it and all queued before it (the last calls' responses and trailers) are
  /// written — a full socket takes them as it drains (``writable()``), not dropped by a close
  /// at once. A client that never reads is closed by the server's grace period
  /// (``close(cancelling:)``).
  func closeOnceWritten() {
    guard let nghttp2 = session.nghttp2,
      nghttp2_session_terminate_session(nghttp2, HTTP2ErrorCode.noError) == 0
    else { return closeSocket() }
    // A drain's own final GOAWAY (its timer) has nothing left to say.
    if let goAwayTimer { loop.cancelTimer(goAwayTimer) }
    goAwayTimer = nil
    machine.finalGoAwayQueued()
    logger.debug(
      "shutting down: final GOAWAY", metadata: ["grpc.open_calls": "\(session.streams.count)"])
    flush()
  }

  /// A draining connection closes once its last call is done and the GOAWAY naming the last
  /// stream has been written. Not after the notice alone: a request the client sent meanwhile
  /// would be neither served nor refused (above the last stream ID), and fail as interrupted.
  /// Nor before the GOAWAY is written: a full socket takes it once it drains (``writable()``),
  /// and the flush that empties it closes (``flush()``).
  func closeIfDrained() {
    guard machine.drained(openCalls: session.streams.count) else { return }
    flush()
  }

  /// Closes the socket at once, without GOAWAY: calls in flight see the connection drop
  /// (fault injection).
  func drop() {
    loop.checkInLoop()
    closeSocket()
  }

  /// Ends every call and the connection (final GOAWAY, then close).
  func close(cancelling error: RPCError) {
    for stream in openStreams {
      stream.abort(error)
      // Tell the client too, before the GOAWAY (after it nghttp2 would drop the reset).
      // Best effort: the connection closes below whether or not the reset could be queued.
      if let nghttp2 = session.nghttp2 {
        _ = nghttp2_submit_rst_stream(nghttp2, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, HTTP2ErrorCode.cancel)
      }
    }
    flush()
    // Closing regardless: the GOAWAY is a courtesy here.
    if let nghttp2 = session.nghttp2, nghttp2_session_terminate_session(nghttp2, HTTP2ErrorCode.noError) == 0 {
      flush()
    }
    closeSocket()
  }

  // MARK: I/O

  func readable() {
    if machine.isHandshaking { return continueHandshake() }
    // Whatever ended the read, the connection is over; a protocol violation first gets the
    // GOAWAY nghttp2 queued for it.
    guard let end = session.read(.server) else { return }
    if case .brokeProtocol(let reason) = end {
      logger.info("the client broke HTTP/2: GOAWAY", metadata: ["grpc.error": "\(reason)"])
      flush()
    }
    closeSocket()
  }

  func readProcessed() -> Bool {
    guard glitchLimitHolds() else { return false }
    answerReadyCalls()
    return session.transport != nil
  }

  func writable() {
    if machine.isHandshaking { return continueHandshake() }
    flush()
  }

  func loopClosing() { closeSocket() }

  func scheduleFlush() { session.scheduleFlush() }

  func setInterest(_ wanted: EventLoop.Interest) { session.setInterest(wanted) }

  func flush() {
    guard session.nghttp2 != nil else { return }
    let outcome = session.flush()
    // Resets nghttp2 sent in this write may be the client's glitches.
    guard glitchLimitHolds() else { return }
    switch outcome {
    case .drained:
      if machine.flushed(sessionOver: session.isOver) { closeSocket() }
    case .wouldBlock:
      break
    case .closed, .writeFailed, .sessionFailed:
      closeSocket()
    }
  }

  /// Closes the socket once what is under way is through (the events being handed over, or
  /// the write, from inside whose data provider this may come): through the loop's queue.
  func closeSocketSoon() {
    let connection = LoopBound(self, on: loop)
    loop.execute { connection.value.closeSocket() }
  }

  func closeSocket() {
    guard machine.close() else { return }
    for timer in [handshakeTimer, idleTimer, keepaliveTimer, ageTimer, goAwayTimer] {
      if let timer { loop.cancelTimer(timer) }
    }
    (handshakeTimer, idleTimer, keepaliveTimer, ageTimer, goAwayTimer) = (nil, nil, nil, nil, nil)
    session.closeTransport()
    logger.debug(
      "connection closed",
      metadata: [
        "grpc.open_calls": "\(session.streams.count)",
        "grpc.glitches": "\(glitches?.total ?? 0)",
      ])
    let open = session.removeAllStreams(as: ServerStream.self)
    readyOnLoop.removeAll()
    for stream in open {
      if stream.machine.streamClosed(http2ErrorCode: HTTP2ErrorCode.cancel) != nil {
        stream.abort(RPCError(code: .unavailable, message: "the connection from \(peer) was lost"))
      }
      stream.discardQueues()
    }
    session.end()
    session.role = nil
    let server = self.server
    self.server = nil
    server?.connectionClosed(ObjectIdentifier(self))
  }
}
