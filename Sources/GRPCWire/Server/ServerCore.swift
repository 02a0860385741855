internal import CoreMetrics
internal import Logging
internal import CGRPCSystem
internal import Glibc

/// The loop-owned side of a server: its listening socket, connections and handlers.
///
/// Owned by the accepting loop (`loop`): the listener, the handlers, the table of
/// connections and the shutdown state are only touched there. Each connection lives on one
/// of `loops` and is only touched on its own; the core reaches a connection on another loop
/// through that loop's `execute`, and a connection tells the core it closed the same way.
/// A connection gets what it needs of the server (``ServerShared``) as it is made, so it
/// never reads anything here.
final class ServerCore: EventHandler {
  // Not Sendable: loop-only. Other threads (the server's methods, its connections on other
  // loops) hold it as a LoopBound, checked on every access, and reach it through its loop's
  // queue.

  /// The loop that accepts and owns this core's state.
  let loop: EventLoop
  /// Every loop connections are served on, `loop` first.
  let loops: [EventLoop]
  /// The loop the next accepted connection goes to (an index into `loops`).
  private var nextLoop = 0
  let options: ServerOptions
  /// What the connections share, from `listen` until the server stops listening. It holds
  /// the core (the connections' way back here), so it must not outlive the listener: kept, it
  /// would keep the core, and all the core holds, alive for good.
  private var shared: ServerShared?
  private var listenFD: Int32 = -1
  /// Each on its own loop (this one or another of `loops`): reached there only.
  private var connections: [ObjectIdentifier: LoopBound<ServerConnection>] = [:]
  private var shutdownWaiters: [CheckedContinuation<Void, Never>]? = nil
  /// Ends the calls still open when the shutdown's grace period is over; it holds the core.
  private var graceTimer: TimerID?
  private var tlsContext: TLSContext?

  init(loops: [EventLoop], options: ServerOptions) {
    precondition(!loops.isEmpty, "a server needs a loop")
    self.loop = loops[0]
    self.loops = loops
    self.options = options
    logger = options.logger
    connectionCount = Meter(label: "rpc.server.connections", factory: options.metricsFactory)
    peerGlitches = options.glitchLimit.map(PeerGlitchBuckets.init)
  }

  /// The glitch buckets of client addresses, shared by the connections of every loop; nil
  /// when ``ServerOptions/glitchLimit`` is.
  let peerGlitches: PeerGlitchBuckets?

  let logger: Logger
  /// Open connections (swift-metrics).
  private let connectionCount: Meter

  func listen(host: String, port: Int, handlers: [String: ServerMethod]) throws(RPCError) -> Int {
    loop.checkInLoop()
    if let tls = options.tls {
      tlsContext = try TLSContext(
        serverCertificateChainFile: tls.certificateChainFile, privateKeyFile: tls.privateKeyFile,
        clientCAFile: options.tlsClientCAFile,
        requireClientCertificate: options.tlsRequireClientCertificate)
    }
    let name = host == "localhost" ? "127.0.0.1" : host
    guard let address = SocketAddress(numericHost: name, port: port) else {
      throw RPCError(code: .unavailable, message: "cannot listen on '\(host)': give an IP address")
    }
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
      | Int32(SOCK_CLOEXEC.rawValue)
    let fd = socket(address.family, type, 0)
    guard fd >= 0 else {
      throw RPCError(code: .unavailable, message: "socket: \(errnoDescription(errno))")
    }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    let bound = address.withSockAddr { bind(fd, $0, $1) }
    guard bound == 0, Glibc.listen(fd, 1024) == 0 else {
      let reason = errnoDescription(errno)
      Glibc.close(fd)
      throw RPCError(code: .unavailable, message: "cannot listen on \(address): \(reason)")
    }
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    let boundPort = withUnsafeBytes(of: storage) { raw -> Int in
      // sin_port and sin6_port sit at the same offset, right after the family.
      Int(UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self)))
    }
    listenFD = fd
    // Made once listening succeeded: a `listen` that throws leaves no core → shared → core
    // cycle behind for a server dropped without a shutdown.
    shared = ServerShared(
      core: LoopBound(self, on: loop), handlers: handlers, options: options, logger: logger,
      peerGlitches: peerGlitches)
    loop.register(fd, .read, self)
    logger.info(
      "listening",
      metadata: ["grpc.address": "\(name):\(boundPort)", "grpc.methods": "\(handlers.count)"])
    return boundPort
  }

  // MARK: Accepting

  /// The pause before accepting again after the process or system ran out of descriptors or
  /// buffers; doubled while it lasts, up to 1 s.
  private var acceptPause: Duration = .zero
  /// Registers the listening socket again when the pause is over; it holds the core, so
  /// stopping cancels it.
  private var pauseTimer: TimerID?
  private static let firstAcceptPause: Duration = .milliseconds(50)
  private static let longestAcceptPause: Duration = .seconds(1)
  /// Connections accepted per readiness of the listening socket, so a flood of new
  /// connections cannot hold the loop.
  private static let acceptsPerReadiness = 64

  func readable() {
    // Set by `listen`, before the socket is registered.
    guard let shared else { return }
    for _ in 0..<Self.acceptsPerReadiness where listenFD >= 0 {
      var storage = sockaddr_storage()
      var length = UInt32(MemoryLayout<sockaddr_storage>.size)
      let fd = fleet_accept_nonblocking(listenFD, &storage, &length)
      guard fd >= 0 else {
        switch errno {
        case EAGAIN, EWOULDBLOCK: return
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
          // The pending connection stays queued and the socket stays readable: asking again
          // at once would spin. Stop listening for a while; descriptors may free up.
          return pauseAccepting()
        default: continue  // ECONNABORTED and the like: that one connection is gone
        }
      }
      acceptPause = .zero
      let peer = Self.describe(storage)
      if let peerGlitches,
        peerGlitches.refuses(
          ServerConnection.address(ofPeer: peer), now: MonotonicInstant.now.nanoseconds)
      {
        RefusedConnection.refuse(fd, on: loop, goAway: tlsContext == nil)
        continue
      }
      guard connections.count < options.maxConnections else {
        Glibc.close(fd)
        logger.notice(
          "connection refused: maxConnections reached",
          metadata: ["grpc.max_connections": "\(options.maxConnections)"])
        continue
      }
      _ = fleet_set_tcp_nodelay(fd)
      let target = loops[nextLoop]
      nextLoop = (nextLoop + 1) % loops.count
      let connection: ServerConnection
      do {
        connection = try ServerConnection(
          loop: target, fd: fd, peer: peer, server: shared, tls: tlsContext)
      } catch {
        Glibc.close(fd)
        logger.warning(
          "cannot serve an accepted connection",
          metadata: ["grpc.peer": "\(peer)", "grpc.error": "\(error.message)"])
        continue
      }
      // Made here, used only on its own loop from now on.
      let bound = LoopBound(connection, on: target)
      connections[ObjectIdentifier(connection)] = bound
      connectionCount.increment()
      onLoop(of: bound) { $0.start() }
    }
  }

  private func pauseAccepting() {
    acceptPause = min(max(acceptPause * 2, Self.firstAcceptPause), Self.longestAcceptPause)
    logger.warning(
      "accept failed: out of descriptors or memory; pausing",
      metadata: ["grpc.error": "\(errnoDescription(errno))", "grpc.pause": "\(acceptPause)"])
    loop.unregister(listenFD)
    pauseTimer = loop.scheduleTimer(at: .now.advanced(by: acceptPause)) { [self] in
      pauseTimer = nil
      guard listenFD >= 0 else { return }
      loop.register(listenFD, .read, self)
    }
  }

  func writable() {}

  func loopClosing() { stopListening() }

  private static func describe(_ storage: sockaddr_storage) -> String {
    withUnsafeBytes(of: storage) { raw in
      switch Int32(storage.ss_family) {
      case AF_INET: "\(SocketAddress(raw.load(as: sockaddr_in.self)))"
      case AF_INET6: "\(SocketAddress(raw.load(as: sockaddr_in6.self)))"
      default: "unknown peer"
      }
    }
  }

  private func stopListening() {
    // Nothing is accepted from now on (`readable` is no longer called, and the accept pause's
    // timer is cancelled): the connections have their own copies.
    shared = nil
    if let pauseTimer { loop.cancelTimer(pauseTimer) }
    pauseTimer = nil
    guard listenFD >= 0 else { return }
    loop.unregister(listenFD)
    Glibc.close(listenFD)
    listenFD = -1
  }

  // MARK: Connections and shutdown

  /// Runs `body` on `connection`'s loop: at once when that is this one (the core's caller is
  /// on `loop`), else soon, through that loop's queue.
  private func onLoop(
    of connection: LoopBound<ServerConnection>,
    _ body: @escaping @Sendable (ServerConnection) -> Void
  ) {
    if connection.loop === loop {
      body(connection.value)
    } else {
      connection.loop.execute { body(connection.value) }
    }
  }

  func goAwayAll() {
    for connection in Array(connections.values) {
      onLoop(of: connection) { $0.beginDraining() }
    }
  }

  /// The connection `id` names closed its socket (``ServerShared/connectionClosed(_:)``
  /// brought this to the core's loop): it leaves the table.
  func connectionClosed(_ id: ObjectIdentifier) {
    loop.checkInLoop()
    if connections.removeValue(forKey: id) != nil {
      connectionCount.decrement()
    }
    if connections.isEmpty { resumeShutdownWaiters() }
  }

  private func resumeShutdownWaiters() {
    guard let waiters = shutdownWaiters, !waiters.isEmpty else { return }
    shutdownWaiters = []
    if let graceTimer { loop.cancelTimer(graceTimer) }
    graceTimer = nil
    for waiter in waiters { waiter.resume() }
  }

  func shutdown(gracePeriod: Duration, done: CheckedContinuation<Void, Never>) {
    loop.checkInLoop()
    stopListening()
    if shutdownWaiters != nil {
      if connections.isEmpty { done.resume() } else { shutdownWaiters!.append(done) }
      return
    }
    shutdownWaiters = [done]
    let error = RPCError(code: .unavailable, message: "the server is shutting down")
    for connection in Array(connections.values) {
      onLoop(of: connection) { $0.serverShuttingDown() }
    }
    if connections.isEmpty {
      resumeShutdownWaiters()
      return
    }
    graceTimer = loop.scheduleTimer(at: .now.advanced(by: gracePeriod)) { [self] in
      graceTimer = nil
      for connection in Array(connections.values) {
        onLoop(of: connection) { $0.close(cancelling: error) }
      }
    }
  }
}
