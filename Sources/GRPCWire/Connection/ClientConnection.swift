internal import CGRPCSystem
internal import CNGHTTP2
internal import Glibc
internal import Logging

/// One HTTP/2 connection to a gRPC server, owned by a single event loop.
///
/// Everything here — socket, TLS, nghttp2 session, stream table, timers — is only touched on
/// `loop`; its ``ConnectionPool`` decides which calls come to it. It is ready once TCP, TLS
/// and the server's first SETTINGS are through (within the connect timeout); calls started
/// before that wait. Reads go into a 64 KiB buffer and straight into
/// `nghttp2_session_mem_recv`; all frames nghttp2 wants to send in one loop tick go out in
/// one write. When the connection is lost its open calls fail with UNAVAILABLE (interrupted);
/// calls still waiting go back to the pool. With keepalive it PINGs every interval while calls
/// are open (or always, with `permitWithoutCalls`), and at once when a call's deadline passes
/// after nothing arrived for a keepalive timeout; a PING unanswered for the timeout closes it.
final class ClientConnection: EventHandler, TickEndHandler, @unchecked Sendable {
  // @unchecked Sendable: loop-only state (see above), reached from other threads only through
  // loop.execute.

  let loop: EventLoop
  let target: String
  let settings: HTTP2Settings
  /// Strong (see ClientStream.connection for why not weak); let go of in `close(with:)`, so
  /// the pool's list and this reference form no lasting cycle.
  var pool: ConnectionPool?
  private let tls: (context: TLSContext, verifyName: String)?
  private let keepalive: ChannelOptions.Keepalive?
  private let allowInsecureCredentials: Bool
  /// The pool's logger with this connection's number (`grpc.connection`).
  private var logger: Logger

  private enum State {
    case idle
    case connecting(addresses: [SocketAddress], index: Int, failures: [String])
    case handshaking
    case awaitingSettings
    case ready
    case closed(RPCError)
  }

  private var state = State.idle
  private var fd: Int32 = -1
  private var transport: (any ByteTransport)?
  private var remoteAddress: SocketAddress?
  private var session: OpaquePointer?
  private var streams: [Int32: ClientStream] = [:]
  /// The header block being received, for whichever stream it belongs to: HTTP/2 sends a
  /// block's frames back to back, so one buffer, kept between blocks, serves every stream.
  var headerBlock: [HeaderField] = []
  /// The stream `stream(_:)` found last; always one of `streams` (cleared when it leaves).
  private var lastLookedUp: ClientStream?
  private var waiting: [ClientStream] = []
  private var output = SessionOutput()
  private var flushScheduled = false
  private var interest: EventLoop.Interest = []
  private var connectTimer: TimerID?
  private var keepaliveTimer: TimerID?
  /// Set while a PING of ours awaits its ACK: it closes the connection when it fires.
  private var pingTimeoutTimer: TimerID?
  /// When bytes last arrived from the server: after a call's deadline, a connection quiet for a
  /// keepalive timeout is probed (see `callTimedOut`).
  private var lastReadAt = MonotonicInstant.now
  /// The server sent GOAWAY: no new calls; close once the last stream is done.
  private(set) var goingAway = false
  /// The server's SETTINGS arrived once: the connection was ready at some point.
  private(set) var becameReady = false

  init(
    loop: EventLoop, target: String, settings: HTTP2Settings,
    tls: (context: TLSContext, verifyName: String)?, keepalive: ChannelOptions.Keepalive?,
    allowInsecureCredentials: Bool, logger: Logger
  ) {
    self.logger = logger
    self.loop = loop
    self.target = target
    self.settings = settings
    self.tls = tls
    self.keepalive = keepalive
    self.allowInsecureCredentials = allowInsecureCredentials
  }

  deinit {
    if let session { nghttp2_session_del(session) }
    transport?.close()
  }

  // MARK: What the pool asks

  var isReady: Bool {
    if case .ready = state { return !goingAway }
    return false
  }

  var isClosed: Bool {
    if case .closed = state { return true }
    return false
  }

  /// Whether another call fits without waiting for a stream under the server's limit.
  var hasFreeStream: Bool {
    guard !goingAway, !isClosed else { return false }
    // Until this connection's SETTINGS arrive, assume the limit the server gave our other
    // connections; with none, it is unknown (RFC 9113: unlimited) and calls wait here.
    guard isReady else { return waiting.count < (pool?.knownStreamLimit ?? .max) }
    return streams.count + waiting.count < maxConcurrentStreams
  }

  var openCallCount: Int { streams.count + waiting.count }

  /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (100 before its SETTINGS arrive).
  var maxConcurrentStreams: Int {
    guard let session else { return 100 }
    return Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
  }

  // MARK: Calls

  /// Starts `stream` here, now if the connection is ready, else once it is.
  func start(_ stream: ClientStream) {
    loop.assertInLoop()
    switch state {
    case .idle, .connecting, .handshaking, .awaitingSettings:
      waiting.append(stream)
    case .ready:
      submit(stream)
    case .closed(let error):
      stream.fail(error, reset: false)
    }
  }

  private func submit(_ stream: ClientStream) {
    // Cancelled or timed out while waiting for the connection: it never reaches the wire.
    guard stream.outcome == nil else { return }
    guard !goingAway else {
      // Drained while the call waited: the pool finds it another connection.
      pool?.start(stream)
      return
    }
    if stream.carriesCredentials, tls == nil, !allowInsecureCredentials,
      remoteAddress?.isLoopback != true
    {
      stream.fail(
        .insecureCredentials(to: remoteAddress.map { "\($0)" } ?? target), reset: false)
      return
    }
    var provider = nghttp2_data_provider()
    provider.source.ptr = Unmanaged.passUnretained(stream).toOpaque()
    provider.read_callback = onDataSourceRead
    let id = HeaderBlock.withNameValues(stream.headerPrefix, stream.requestHeaders) {
      nva, count in
      nghttp2_submit_request(
        session, nil, nva, count, &provider, Unmanaged.passUnretained(stream).toOpaque())
    }
    guard id > 0 else {
      stream.fail(
        RPCError(code: .internalError, message: "nghttp2 refused the request: \(nghttp2Error(id))"),
        reset: false)
      return
    }
    streams[id] = stream
    stream.started(id: id, on: self)
    if streams.count == 1 { scheduleKeepalive() }
    scheduleFlush()
  }

  func resumeData(of stream: ClientStream) {
    loop.assertInLoop()
    guard let session, streams[stream.streamID] != nil else { return }
    // Fails only when nghttp2 no longer defers the stream's data: nothing waits to resume.
    _ = nghttp2_session_resume_data(session, stream.streamID)
    scheduleFlush()
  }

  /// Acknowledges `count` received bytes: for the stream and the connection while the stream is
  /// open in nghttp2, else for the connection only.
  func consume(streamID: Int32, _ count: Int, streamOpen: Bool) {
    loop.assertInLoop()
    guard let session, count > 0 else { return }
    ReceiveCredit.acknowledge(
      count, streamID: streamID, streamOpen: streamOpen && streams[streamID] != nil, in: session)
    scheduleFlush()
  }

  func reset(streamID: Int32) {
    loop.assertInLoop()
    guard let session else { return }
    // A call reset once its deadline has passed is one that timed out here: ClientStream's
    // deadline timer fails the call and resets its stream through this method.
    if let deadline = streams[streamID]?.deadline, deadline <= .now { callTimedOut() }
    guard nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, HTTP2ErrorCode.cancel) == 0
    else {
      // Out of memory: the stream cannot be reset alone; the connection goes with it.
      return loop.execute { [weak self] in
        self?.close(with: .interrupted("the connection to \(self?.target ?? "") failed: nghttp2 could not queue a reset"))
      }
    }
    scheduleFlush()
  }

  /// Cancels every call on this connection with `error` (graceful close's last step).
  func cancelAll(_ error: RPCError) {
    loop.assertInLoop()
    for stream in Array(streams.values) + waiting { stream.fail(error, reset: true) }
  }

  // MARK: Connecting

  /// Connects to the first of `addresses` that accepts, within `timeout` for TCP, TLS and the
  /// server's first SETTINGS together.
  func connect(to addresses: [SocketAddress], timeout: Duration) {
    loop.assertInLoop()
    guard case .idle = state else { return }
    state = .connecting(addresses: addresses, index: 0, failures: [])
    logger.debug("connecting", metadata: ["grpc.addresses": "\(addresses.map { "\($0)" })"])
    connectTimer = loop.scheduleTimer(at: .now.advanced(by: timeout)) { [self] in
      connectTimer = nil
      close(with: RPCError(
        code: .unavailable,
        message: "connecting to \(target) timed out after \(ClientStream.describe(timeout)) "
          + "(\(connectPhase))"))
    }
    attemptConnect()
  }

  /// Name resolution failed (it runs off the loop).
  func resolutionFailed(_ error: RPCError) {
    loop.assertInLoop()
    close(with: error)
  }

  private var connectPhase: String {
    switch state {
    case .idle, .connecting: "no TCP connection"
    case .handshaking: "TLS handshake unfinished"
    case .awaitingSettings: "the server sent no HTTP/2 SETTINGS"
    case .ready, .closed: "done"
    }
  }

  private func attemptConnect() {
    guard case .connecting(let addresses, let index, var failures) = state else { return }
    guard index < addresses.count else {
      close(
        with: RPCError(
          code: .unavailable,
          message: "cannot connect to \(target): " + failures.joined(separator: "; ")))
      return
    }
    let address = addresses[index]
    let socketFD = socket(
      address.family,
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard socketFD >= 0 else {
      failures.append("\(address): socket: \(errnoDescription(errno))")
      state = .connecting(addresses: addresses, index: index + 1, failures: failures)
      return attemptConnect()
    }
    _ = fleet_set_tcp_nodelay(socketFD)
    let result = address.withSockAddr { Glibc.connect(socketFD, $0, $1) }
    if result == 0 || errno == EINPROGRESS {
      fd = socketFD
      remoteAddress = address
      setInterest(.write)
      if result == 0 { tcpConnected() }
    } else {
      failures.append("\(address): \(errnoDescription(errno))")
      Glibc.close(socketFD)
      state = .connecting(addresses: addresses, index: index + 1, failures: failures)
      attemptConnect()
    }
  }

  private func tcpConnectFinished() {
    guard case .connecting(let addresses, let index, var failures) = state else { return }
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
    if error == 0 {
      tcpConnected()
      return
    }
    failures.append("\(addresses[index]): \(errnoDescription(error))")
    setInterest([])
    Glibc.close(fd)
    fd = -1
    state = .connecting(addresses: addresses, index: index + 1, failures: failures)
    attemptConnect()
  }

  private func tcpConnected() {
    if let tls {
      do {
        transport = try TLSTransport(
          fd: fd, context: tls.context, verifyName: tls.verifyName, target: target)
      } catch {
        close(with: error)
        return
      }
      state = .handshaking
      continueHandshake()
    } else {
      transport = PlainTransport(fd: fd)
      startSession()
    }
  }

  private func continueHandshake() {
    guard case .handshaking = state, let transport else { return }
    switch transport.handshake() {
    case .done: startSession()
    case .wantRead: setInterest(.read)
    case .wantWrite: setInterest(.write)
    case .failed(let error):
      logger.warning("TLS handshake failed", metadata: ["grpc.error": "\(error.message)"])
      close(with: error)
    }
  }

  /// TCP (and TLS) are up: send our preface and SETTINGS, then wait for the server's.
  private func startSession() {
    session = HTTP2Settings.makeClientSession(userData: Unmanaged.passUnretained(self).toOpaque())
    guard settings.submit(to: session!) else {
      return close(with: .interrupted("the connection to \(target) failed: nghttp2 could not queue our SETTINGS"))
    }
    state = .awaitingSettings
    setInterest(.read)
    scheduleFlush()
  }

  /// The server's SETTINGS arrived: the connection is ready.
  func settingsReceived() {
    guard case .awaitingSettings = state else { return }
    state = .ready
    becameReady = true
    if let remoteAddress { logger[metadataKey: "grpc.peer"] = "\(remoteAddress)" }
    logger.debug(
      "connection ready", metadata: ["grpc.max_concurrent_streams": "\(maxConcurrentStreams)"])
    if let connectTimer {
      loop.cancelTimer(connectTimer)
      self.connectTimer = nil
    }
    let pending = waiting
    waiting.removeAll()
    for stream in pending { submit(stream) }
    scheduleKeepalive()
    pool?.connectionReady(self)
  }

  // MARK: Keepalive

  private func scheduleKeepalive() {
    guard let keepalive, keepaliveTimer == nil, pingTimeoutTimer == nil, isReady else { return }
    guard keepalive.permitWithoutCalls || !streams.isEmpty else { return }
    let interval = pool?.keepaliveInterval ?? keepalive.interval
    keepaliveTimer = loop.scheduleTimer(at: .now.advanced(by: interval)) { [self] in
      keepaliveTimer = nil
      sendKeepalivePing()
    }
  }

  private func sendKeepalivePing() {
    guard let keepalive, isReady else { return }
    guard keepalive.permitWithoutCalls || !streams.isEmpty else { return }
    sendPing(
      deadReason: "a keepalive PING went unanswered for "
        + ClientStream.describe(keepalive.timeout))
  }

  /// A call's deadline passed on this connection. When nothing has arrived for a keepalive
  /// timeout either, the connection may be dead without a FIN or RST (a black-holed path, a
  /// lost NAT entry), and every call sent on it would time out the same way: PING at once
  /// rather than at the next keepalive interval — a poller's connection has a call open only
  /// now and then, so the periodic PING may never find one to go out with — and close the
  /// connection when the PING is not answered within the keepalive timeout, so that the next
  /// calls go to a new connection instead of this one. A PING already in flight decides alone.
  private func callTimedOut() {
    guard let keepalive, case .ready = state, pingTimeoutTimer == nil else { return }
    let quiet = lastReadAt.duration(to: .now)
    guard quiet >= keepalive.timeout else { return }
    if let keepaliveTimer {
      loop.cancelTimer(keepaliveTimer)
      self.keepaliveTimer = nil
    }
    sendPing(
      deadReason: "a call's deadline passed with nothing received for "
        + "\(ClientStream.describe(quiet)), and a keepalive PING sent to check went unanswered "
        + "for \(ClientStream.describe(keepalive.timeout))")
  }

  /// Sends a PING; unless its ACK comes within the keepalive timeout, the connection closes,
  /// failing its calls with UNAVAILABLE (interrupted) saying `deadReason`.
  private func sendPing(deadReason: String) {
    guard let keepalive, let session else { return }
    // A PING that cannot be queued (out of memory) is as good as one unanswered: the timer
    // below closes the connection.
    let queued = nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil) == 0
    if queued { scheduleFlush() }
    logger.trace("PING sent", metadata: ["grpc.ping_reason": "\(deadReason)"])
    pingTimeoutTimer = loop.scheduleTimer(at: .now.advanced(by: keepalive.timeout)) { [self] in
      pingTimeoutTimer = nil
      logger.info("keepalive PING unanswered: closing the connection")
      close(with: .interrupted("the connection to \(target) is dead: \(deadReason)"))
    }
  }

  func pingAcknowledged() {
    if let pingTimeoutTimer {
      loop.cancelTimer(pingTimeoutTimer)
      self.pingTimeoutTimer = nil
    }
    scheduleKeepalive()
  }

  // MARK: I/O

  func readable() {
    switch state {
    case .connecting:
      tcpConnectFinished()
      return
    case .handshaking:
      continueHandshake()
      return
    case .idle, .closed:
      return
    case .awaitingSettings, .ready:
      break
    }
    guard let transport else { return }
    // Read what is there, up to the client's read budget, so one busy connection cannot
    // starve the loop.
    let budget = ReadBudget.client
    let readBuffer = UnsafeMutableRawBufferPointer(rebasing: loop.readBuffer[..<budget.bytes])
    for _ in 0..<budget.reads {
      switch transport.read(into: readBuffer) {
      case .bytes(let count):
        lastReadAt = .now
        let consumed = nghttp2_session_mem_recv(
          session, readBuffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count)
        if consumed < 0 {
          // nghttp2 has queued a GOAWAY describing the violation; send it, then give up.
          logger.warning(
            "the server broke HTTP/2", metadata: ["grpc.error": "\(nghttp2Error(Int32(consumed)))"])
          flush()
          close(with: .interrupted("the connection to \(target) failed: the server broke HTTP/2 (\(nghttp2Error(Int32(consumed))))"))
          return
        }
        if isClosed { return }
        if count < readBuffer.count { return scheduleFlush() }
      case .wouldBlock(let wantWrite):
        if wantWrite { setInterest([.read, .write]) }
        return scheduleFlush()
      case .closed:
        close(with: readFailure("the server closed the connection"))
        return
      case .failed(let reason):
        close(with: readFailure(reason))
        return
      }
    }
    scheduleFlush()
  }

  /// A read failed. Before the server's SETTINGS no call has run, so it is a failed connection
  /// attempt (with TLS, typically the server rejecting us, e.g. for a missing client
  /// certificate, which TLS 1.3 reports only on the first read); afterwards it interrupts the
  /// calls in flight.
  private func readFailure(_ reason: String) -> RPCError {
    guard case .awaitingSettings = state else {
      return .interrupted("the connection to \(target) failed: \(reason)")
    }
    if tls != nil {
      return RPCError(code: .unavailable, message: "TLS handshake with \(target) failed: \(reason)")
    }
    return RPCError(
      code: .unavailable,
      message: "the connection to \(target) failed before the server's HTTP/2 SETTINGS: \(reason)")
  }

  func writable() {
    switch state {
    case .connecting: tcpConnectFinished()
    case .handshaking: continueHandshake()
    case .awaitingSettings, .ready: flush()
    case .idle, .closed: break
    }
  }

  func loopClosing() {
    close(with: RPCError(code: .unavailable, message: "the event loop is shutting down"))
  }

  private func setInterest(_ wanted: EventLoop.Interest) {
    guard fd >= 0 else { return }
    loop.changeInterest(fd, from: &interest, to: wanted, self)
  }

  private func scheduleFlush() {
    guard !flushScheduled else { return }
    flushScheduled = true
    loop.runAtEndOfTick(self)
  }

  func tickEnded() {
    flushScheduled = false
    flush()
  }

  /// Moves what nghttp2 wants to send into `output` and writes it: many frames, one write.
  private func flush() {
    guard let session, let transport else { return }
    switch state {
    case .awaitingSettings, .ready: break
    case .idle, .connecting, .handshaking, .closed: return
    }
    switch output.flush(session, through: transport) {
    case .drained:
      break
    case .wouldBlock(let wantWrite):
      setInterest(wantWrite ? [.read, .write] : .read)
      return
    case .closed:
      close(with: .interrupted("the server at \(target) closed the connection"))
      return
    case .writeFailed(let reason):
      close(with: .interrupted("the connection to \(target) failed while writing: \(reason)"))
      return
    case .sessionFailed(let code):
      close(with: .interrupted("the connection to \(target) failed: \(nghttp2Error(code))"))
      return
    }
    setInterest(.read)
    if goingAway && streams.isEmpty {
      close(with: RPCError(code: .unavailable, message: "the connection to \(target) was closed after GOAWAY"))
    } else if nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 {
      close(with: .interrupted("the HTTP/2 session with \(target) ended"))
    }
  }

  /// Closes now: frames queued this tick (a RST_STREAM, say) go out first, then a GOAWAY.
  func shutDown(_ error: RPCError) {
    loop.assertInLoop()
    if session != nil, !isClosed {
      // Flush first: once a terminating GOAWAY is queued nghttp2 drops queued RST_STREAMs.
      flush()
      // (The flush may have found the connection dead and closed it.)
      if let session {
        nghttp2_session_terminate_session(session, HTTP2ErrorCode.noError)
        flush()
      }
    }
    close(with: error)
  }

  /// Fails open calls with `error`, hands waiting ones back to the pool, and releases the
  /// socket, TLS and session.
  private func close(with error: RPCError) {
    if case .closed = state { return }
    let wasReady = isReady || goingAway
    state = .closed(error)
    if !wasReady {
      logger.info("connection attempt failed", metadata: ["grpc.error": "\(error.message)"])
    } else if error.isInterrupted {
      logger.info(
        "connection lost", metadata: ["grpc.error": "\(error.message)", "grpc.open_calls": "\(streams.count)"])
    } else {
      logger.debug("connection closed", metadata: ["grpc.reason": "\(error.message)"])
    }
    for timer in [connectTimer, keepaliveTimer, pingTimeoutTimer].compactMap({ $0 }) {
      loop.cancelTimer(timer)
    }
    connectTimer = nil
    keepaliveTimer = nil
    pingTimeoutTimer = nil
    let open = streams
    streams.removeAll()
    lastLookedUp = nil
    for stream in open.values { stream.closed(http2ErrorCode: 0, lostConnection: error) }
    let pending = waiting
    waiting.removeAll()
    setInterest([])
    if let transport {
      transport.close()
      self.transport = nil
    } else if fd >= 0 {
      Glibc.close(fd)
    }
    fd = -1
    if let session {
      nghttp2_session_del(session)
      self.session = nil
    }
    if let pool {
      self.pool = nil
      pool.connectionClosed(self, error: error, wasReady: wasReady, waiting: pending)
    } else {
      for stream in pending { stream.fail(error, reset: false) }
    }
  }

  // MARK: From nghttp2's callbacks (inside mem_recv / mem_send)

  /// The open stream `id`. nghttp2 calls back a dozen times per call (each header field,
  /// each DATA chunk), nearly always for the stream of the call before: that one is kept at
  /// hand rather than hashed for again.
  func stream(_ id: Int32) -> ClientStream? {
    if let last = lastLookedUp, last.streamID == id { return last }
    let found = streams[id]
    if found != nil { lastLookedUp = found }
    return found
  }

  func streamClosed(_ id: Int32, http2ErrorCode: UInt32) {
    if lastLookedUp?.streamID == id { lastLookedUp = nil }
    streams.removeValue(forKey: id)?.closed(http2ErrorCode: http2ErrorCode)
    pool?.callEnded(on: self)
  }

  func goAwayReceived(lastStreamID: Int32, errorCode: UInt32, debugData: String) {
    guard !goingAway else { return }
    goingAway = true
    logger.info(
      "GOAWAY received",
      metadata: [
        "grpc.http2_error": "\(errorCode)", "grpc.last_stream_id": "\(lastStreamID)",
        "grpc.debug_data": "\(debugData.prefix(256))",
      ])
    // gRPC servers send ENHANCE_YOUR_CALM "too_many_pings" when we ping too often.
    let tooManyPings = errorCode == 0xB && debugData.contains("too_many_pings")
    pool?.connectionDraining(self, tooManyPings: tooManyPings)
    scheduleFlush()
  }
}

extension RPCError {
  /// A bearer token would have gone over plaintext to a non-loopback address.
  static func insecureCredentials(to destination: String) -> RPCError {
    RPCError(
      code: .unauthenticated,
      message: "refusing to send credentials (authorization metadata) over plaintext to "
        + "\(destination), which is not a loopback address; use TLS, or set "
        + "ChannelOptions.allowInsecureCredentials")
  }
}

/// nghttp2's text for one of its error codes.
func nghttp2Error(_ code: Int32) -> String {
  String(cString: nghttp2_strerror(code))
}
