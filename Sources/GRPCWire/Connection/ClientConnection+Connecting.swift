internal import CGRPCSystem
internal import Glibc
internal import Logging

/// Connecting: TCP to each address in turn, then TLS, then our preface and SETTINGS; ready
/// once the server's SETTINGS arrive, all within the connect timeout.
extension ClientConnection {
  /// Connects to the first of `addresses` that accepts, within `timeout` for TCP, TLS and the
  /// server's first SETTINGS together.
  func connect(to addresses: [SocketAddress], timeout: Duration) {
    loop.checkInLoop()
    let first = machine.connect(to: addresses, target: target)
    if case .ignore = first { return }
    logger.debug("connecting", metadata: ["grpc.addresses": "\(addresses.map { "\($0)" })"])
    connectTimer = loop.scheduleTimer(at: .now.advanced(by: timeout)) { [self] in
      connectTimer = nil
      close(with: RPCError(
        code: .unavailable,
        message: "connecting to \(target) timed out after \(ClientStream.describe(timeout)) "
          + "(\(machine.connectPhase))"))
    }
    attempt(first)
  }

  /// Name resolution failed (it runs off the loop).
  func resolutionFailed(_ error: RPCError) {
    loop.checkInLoop()
    close(with: error)
  }

  /// Connects to the address the machine names next, until one accepts or connects later.
  func attempt(_ next: ClientConnectionStateMachine.OnConnecting) {
    var next = next
    while case .attempt(let address) = next {
      let socketFD = socket(
        address.family,
        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
      guard socketFD >= 0 else {
        next = machine.attemptFailed("socket: \(errnoDescription(errno))", target: target)
        continue
      }
      _ = fleet_set_tcp_nodelay(socketFD)
      let result = address.withSockAddr { Glibc.connect(socketFD, $0, $1) }
      guard result == 0 || errno == EINPROGRESS else {
        next = machine.attemptFailed(errnoDescription(errno), target: target)
        Glibc.close(socketFD)
        continue
      }
      let session = HTTP2Session(loop: loop, fd: socketFD)
      session.role = self
      self.session = session
      remoteAddress = address
      setInterest(.write)
      if result == 0 { tcpConnected() }
      return
    }
    if case .fail(let error) = next { close(with: error) }
  }

  func tcpConnectFinished() {
    guard case .connecting = machine.state, let session else { return }
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    getsockopt(session.fd, SOL_SOCKET, SO_ERROR, &error, &length)
    if error == 0 {
      tcpConnected()
      return
    }
    session.closeTransport()
    self.session = nil
    attempt(machine.attemptFailed(errnoDescription(error), target: target))
  }

  func tcpConnected() {
    guard let session else { return }
    proceed(machine.tcpConnected(tls: tls != nil, tunnel: tunnel != nil), on: session)
  }

  /// Starts what comes after TCP, or after the proxy's tunnel: the CONNECT exchange, TLS to
  /// the target, or our HTTP/2 preface.
  func proceed(_ next: ClientConnectionStateMachine.OnConnected, on session: HTTP2Session) {
    switch next {
    case .tunnel:
      guard let tunnel else { return }
      let proxy = tunnel.exchange.proxy
      if proxy.usesTLS, let proxyTLS {
        // TLS to the proxy first (its own name as SNI and the name its certificate must
        // carry); the CONNECT exchange, then the tunnel, run inside it.
        do {
          session.transport = try TLSTransport(
            fd: session.fd, context: proxyTLS, verifyName: proxy.host,
            target: "the proxy \(proxy)")
        } catch {
          return close(with: error)
        }
      } else {
        session.transport = PlainTransport(fd: session.fd)
      }
      logger.debug("asking the proxy for a tunnel", metadata: ["grpc.proxy": "\(tunnel.exchange.proxy)"])
      continueTunnel()
    case .handshake:
      guard let tls else { return }
      do {
        if let proxyTransport = session.transport as? TLSTransport {
          // Through an https:// proxy's tunnel: TLS to the target inside the TLS to the proxy.
          session.transport = try TLSTransport(
            over: proxyTransport, context: tls.context, verifyName: tls.verifyName,
            target: target)
        } else {
          session.transport = try TLSTransport(
            fd: session.fd, context: tls.context, verifyName: tls.verifyName, target: target)
        }
      } catch {
        close(with: error)
        return
      }
      continueHandshake()
    case .startSession:
      // Through a tunnel, HTTP/2 goes over the transport that carried CONNECT.
      if session.transport == nil { session.transport = PlainTransport(fd: session.fd) }
      startSession()
    case .ignore:
      return
    }
  }

  func continueHandshake() {
    guard case .handshaking = machine.state, let transport = session?.transport else { return }
    switch transport.handshake() {
    case .done: if machine.handshakeDone() == .startSession { startSession() }
    case .wantRead: setInterest(.read)
    case .wantWrite: setInterest(.write)
    case .failed(let error):
      logger.warning("TLS handshake failed", metadata: ["grpc.error": "\(error.message)"])
      close(with: error)
    }
  }

  /// TCP (and TLS) are up: send our preface and SETTINGS, then wait for the server's.
  func startSession() {
    guard let session, session.start(.client, settings: settings) else {
      return close(with: .interrupted("the connection to \(target) failed: nghttp2 could not queue our SETTINGS"))
    }
    machine.sessionStarted()
    setInterest(.read)
    scheduleFlush()
  }

  /// The server's SETTINGS arrived: the connection is ready.
  func settingsReceived() {
    guard machine.settingsReceived() else { return }
    if let remoteAddress { logger[metadataKey: "grpc.peer"] = "\(remoteAddress)" }
    logger.debug(
      "connection ready", metadata: ["grpc.max_concurrent_streams": "\(maxConcurrentStreams)"])
    if let connectTimer {
      loop.cancelTimer(connectTimer)
      self.connectTimer = nil
    }
    let pending = waiting
    waiting.removeAll()
    // Calls that waited for the server's SETTINGS: as many as its limit allows go here; the
    // rest go back to the pool, which spreads them over other connections (opening them, up
    // to its maximum) rather than leaving them queued behind this one's streams — for
    // long-lived streams, queued for good.
    let fit = max(0, maxConcurrentStreams - openStreamCount)
    for stream in pending.prefix(fit) { submit(stream) }
    scheduleKeepalive()
    guard let pool else { return }
    pool.connectionReady(self)
    for stream in pending.dropFirst(fit) { pool.start(stream) }
    pool.runReadyWaiters()
  }
}
