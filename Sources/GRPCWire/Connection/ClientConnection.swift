internal import CGRPCSystem
internal import CNGHTTP2
internal import Glibc
internal import Logging

/// One HTTP/2 connection to a gRPC server, owned by a single event loop.
///
/// Everything here — socket, TLS, nghttp2 session, stream table, timers — is only touched on
/// `loop`; its ``ConnectionPool`` decides which calls come to it. It is ready once TCP, TLS
/// and the server's first SETTINGS are through (within the connect timeout); calls started
/// before that wait. Socket, TLS and nghttp2 session are its ``HTTP2Session``, which reads
/// straight into nghttp2 and writes all frames of a loop tick in one write; this type is the
/// client's role over it (files `ClientConnection+*.swift`). When the connection is lost its open calls fail with UNAVAILABLE (interrupted);
/// calls still waiting go back to the pool. With keepalive it PINGs every interval while calls
/// are open (or always, with `permitWithoutCalls`), and at once when a call's deadline passes
/// after nothing arrived for a keepalive timeout; a PING unanswered for the timeout closes it.
final class ClientConnection: HTTP2SessionRole, BalancedConnection {
  // Not Sendable: loop-only state (see above); work queued to its loop holds it as a
  // LoopBound.

  let loop: EventLoop
  let target: String
  let settings: HTTP2Settings
  /// Strong (see ClientStream.connection for why not weak); let go of in `close(with:)`, so
  /// the pool's list and this reference form no lasting cycle.
  var pool: ConnectionPool?
  let tls: (context: TLSContext, verifyName: String)?
  /// Through a proxy: the CONNECT exchange that opens the tunnel (while it runs), with the
  /// request's bytes sent so far.
  var tunnel: (exchange: ConnectExchange, sent: Int)?
  /// The TLS context of an `https://` proxy (TLS to the proxy, then the tunnel inside it).
  let proxyTLS: TLSContext?
  /// Whether the target (not the proxy) is a loopback address, for the plaintext-credentials
  /// check.
  let targetIsLoopback: Bool?
  let keepalive: ChannelOptions.Keepalive?
  let allowInsecureCredentials: Bool
  /// The pool's logger with this connection's number (`grpc.connection`).
  var logger: Logger

  /// Connecting, ready, going away, closed: see the machine.
  ///
  /// This, `session` and `waiting` are read for every call's start (the balancer asks each
  /// connection) and every event of its stream: their exclusivity is not checked at run time,
  /// as they are loop-only and no access to one of them spans a call that reaches it again.
  @exclusivity(unchecked) var machine = ClientConnectionStateMachine()
  /// The socket, transport and nghttp2 session: from the first connect attempt's socket on.
  @exclusivity(unchecked) var session: HTTP2Session?
  var remoteAddress: SocketAddress?
  @exclusivity(unchecked) var waiting: [ClientStream] = []
  var connectTimer: TimerID?
  var keepaliveTimer: TimerID?
  /// Set while a PING of ours awaits its ACK: it closes the connection when it fires.
  var pingTimeoutTimer: TimerID?
  /// When bytes last arrived from the server: after a call's deadline, a connection quiet for a
  /// keepalive timeout is probed (see `callTimedOut`).
  var lastReadAt = MonotonicInstant.now

  init(
    loop: EventLoop, target: String, settings: HTTP2Settings,
    tls: (context: TLSContext, verifyName: String)?, tunnel: ConnectExchange? = nil,
    proxyTLS: TLSContext? = nil, keepalive: ChannelOptions.Keepalive?, allowInsecureCredentials: Bool, logger: Logger
  ) {
    self.logger = logger
    self.tunnel = tunnel.map { ($0, 0) }
    // Through a proxy the peer is the proxy; the target's own address decides.
    targetIsLoopback =
      tunnel.map { _ in
        let host = target.hasPrefix("[") ? String(target.dropFirst().prefix { $0 != "]" })
          : String(target.prefix { $0 != ":" })
        return host == "localhost" || SocketAddress(numericHost: host, port: 0)?.isLoopback == true
      }
    self.loop = loop
    self.target = target
    self.settings = settings
    self.tls = tls
    self.proxyTLS = proxyTLS
    self.keepalive = keepalive
    self.allowInsecureCredentials = allowInsecureCredentials
  }

  deinit {
    // Its calls' streams hold the session (to acknowledge, resume and reset through), which
    // holds its role unowned. close(with:) ends the session and clears the role on the loop;
    // one let go unclosed, as its loop stopped, ends its session here first, so that nothing
    // reaches the role through it.
    if let session, session.nghttp2 != nil {
      session.role = nil
      session.end()
    }
  }

  // MARK: What the pool asks

  var isReady: Bool { machine.isReady }

  var isClosed: Bool { machine.isClosed }

  /// The server sent GOAWAY: no new calls; close once the last stream is done.
  var goingAway: Bool { machine.goingAway }

  /// The server's SETTINGS arrived once: the connection was ready at some point.
  var becameReady: Bool { machine.becameReady }

  /// Whether another call fits without waiting for a stream under the server's limit.
  var hasFreeStream: Bool {
    guard !goingAway, !isClosed else { return false }
    // Until this connection's SETTINGS arrive, assume the limit the server gave our other
    // connections; with none, it is unknown (RFC 9113: unlimited) and calls wait here.
    guard isReady else { return waiting.count < (pool?.knownStreamLimit ?? .max) }
    return openStreamCount + waiting.count < maxConcurrentStreams
  }

  var openCallCount: Int { openStreamCount + waiting.count }

  /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (100 before its SETTINGS arrive).
  var maxConcurrentStreams: Int {
    guard let nghttp2 = session?.nghttp2 else { return 100 }
    return Int(nghttp2_session_get_remote_settings(nghttp2, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
  }

  // MARK: Calls

  /// Starts `stream` here, now if the connection is ready, else once it is.
  func start(_ stream: ClientStream) {
    loop.checkInLoop()
    switch machine.state {
    case .idle, .connecting, .tunnelling, .handshaking, .awaitingSettings:
      waiting.append(stream)
    case .ready:
      submit(stream)
    case .closed(let error):
      stream.fail(error, reset: false)
    }
  }

  func submit(_ stream: ClientStream) {
    // Cancelled or timed out while waiting for the connection: it never reaches the wire.
    guard !stream.ended else { return }
    guard !goingAway else {
      // Drained while the call waited: the pool finds it another connection.
      pool?.start(stream)
      return
    }
    if stream.carriesCredentials, tls == nil, !allowInsecureCredentials,
      (targetIsLoopback ?? remoteAddress?.isLoopback) != true
    {
      stream.fail(
        .insecureCredentials(to: remoteAddress.map { "\($0)" } ?? target), reset: false)
      return
    }
    // Ready: the session is there (a closed connection fails its waiting calls instead).
    guard let session else {
      return stream.fail(.interrupted("the connection to \(target) closed"), reset: false)
    }
    var provider = HTTP2Session.bodyProvider(for: stream)
    let id = HeaderBlock.withNameValues(stream.headerPrefix, stream.requestHeaders) {
      nva, count in
      nghttp2_submit_request(
        session.nghttp2, nil, nva, count, &provider, Unmanaged.passUnretained(stream).toOpaque())
    }
    guard id > 0 else {
      stream.fail(
        RPCError(code: .internalError, message: "nghttp2 refused the request: \(nghttp2Error(id))"),
        reset: false)
      return
    }
    stream.started(id: id, on: session)
    session.add(stream)
    if openStreamCount == 1 { scheduleKeepalive() }
    scheduleFlush()
  }

  /// A call's stream could not be reset (out of memory: see
  /// ``HTTP2Session/cancel(_:deadlinePassed:)``): the connection goes with it.
  func resetNotQueued(_ id: Int32) {
    let connection = LoopBound(self, on: loop)
    loop.execute {
      connection.value.close(with: .interrupted(
        "the connection to \(connection.value.target) failed: nghttp2 could not queue a reset"))
    }
  }

  /// Cancels every call on this connection with `error` (graceful close's last step).
  func cancelAll(_ error: RPCError) {
    loop.checkInLoop()
    for stream in openStreams + waiting { stream.fail(error, reset: true) }
  }

  // MARK: I/O

  func readable() {
    switch machine.state {
    case .connecting:
      tcpConnectFinished()
      return
    case .tunnelling:
      continueTunnel()
      return
    case .handshaking:
      continueHandshake()
      return
    case .idle, .closed:
      return
    case .awaitingSettings, .ready:
      break
    }
    guard let session else { return }
    switch session.read(.client) {
    case nil:
      return
    case .brokeProtocol(let reason):
      // nghttp2 has queued a GOAWAY describing the violation; send it, then give up.
      logger.warning("the server broke HTTP/2", metadata: ["grpc.error": "\(reason)"])
      flush()
      close(with: .interrupted("the connection to \(target) failed: the server broke HTTP/2 (\(reason))"))
    case .closed:
      close(with: readFailure("the server closed the connection"))
    case .failed(let reason):
      close(with: readFailure(reason))
    }
  }

  func readProcessed() -> Bool {
    lastReadAt = .now
    return !isClosed
  }

  /// A read failed. Before the server's SETTINGS no call has run, so it is a failed connection
  /// attempt (with TLS, typically the server rejecting us, e.g. for a missing client
  /// certificate, which TLS 1.3 reports only on the first read); afterwards it interrupts the
  /// calls in flight.
  func readFailure(_ reason: String) -> RPCError {
    guard case .awaitingSettings = machine.state else {
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
    switch machine.state {
    case .connecting: tcpConnectFinished()
    case .tunnelling: continueTunnel()
    case .handshaking: continueHandshake()
    case .awaitingSettings, .ready: flush()
    case .idle, .closed: break
    }
  }

  func loopClosing() {
    close(with: RPCError(code: .unavailable, message: "the event loop is shutting down"))
  }

  func setInterest(_ wanted: EventLoop.Interest) {
    session?.setInterest(wanted)
  }

  func scheduleFlush() {
    session?.scheduleFlush()
  }

  /// Writes what nghttp2 has queued: many frames, one write.
  func flush() {
    guard let session else { return }
    switch machine.state {
    case .awaitingSettings, .ready: break
    case .idle, .connecting, .tunnelling, .handshaking, .closed: return
    }
    switch session.flush() {
    case .drained:
      break
    case .wouldBlock:
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
    if goingAway && openStreamCount == 0 {
      close(with: RPCError(code: .unavailable, message: "the connection to \(target) was closed after GOAWAY"))
    } else if session.isOver {
      close(with: .interrupted("the HTTP/2 session with \(target) ended"))
    }
  }

  /// Closes now: frames queued this tick (a RST_STREAM, say) go out first, then a GOAWAY.
  func shutDown(_ error: RPCError) {
    loop.checkInLoop()
    if session?.nghttp2 != nil, !isClosed {
      // Flush first: once a terminating GOAWAY is queued nghttp2 drops queued RST_STREAMs.
      flush()
      // (The flush may have found the connection dead and closed it.)
      if let nghttp2 = session?.nghttp2 {
        nghttp2_session_terminate_session(nghttp2, HTTP2ErrorCode.noError)
        flush()
      }
    }
    close(with: error)
  }

  /// Fails open calls with `error`, hands waiting ones back to the pool, and releases the
  /// socket, TLS and session.
  func close(with error: RPCError) {
    let closing = machine.close(error)
    if case .ignore = closing { return }
    let wasReady = closing == .lost
    if !wasReady {
      logger.info("connection attempt failed", metadata: ["grpc.error": "\(error.message)"])
    } else if error.isInterrupted {
      logger.info(
        "connection lost",
        metadata: ["grpc.error": "\(error.message)", "grpc.open_calls": "\(openStreamCount)"])
    } else {
      logger.debug("connection closed", metadata: ["grpc.reason": "\(error.message)"])
    }
    for timer in [connectTimer, keepaliveTimer, pingTimeoutTimer].compactMap({ $0 }) {
      loop.cancelTimer(timer)
    }
    connectTimer = nil
    keepaliveTimer = nil
    pingTimeoutTimer = nil
    let open = session?.removeAllStreams(as: ClientStream.self) ?? []
    // A lost connection retries nothing: `.done` for each.
    for stream in open { _ = stream.closed(http2ErrorCode: 0, lostConnection: error) }
    let pending = waiting
    waiting.removeAll()
    if let session {
      self.session = nil
      session.closeTransport()
      session.end()
      session.role = nil
    }
    if let pool {
      self.pool = nil
      pool.connectionClosed(self, error: error, wasReady: wasReady, waiting: pending)
    } else {
      for stream in pending { stream.fail(error, reset: false) }
    }
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
