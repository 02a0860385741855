internal import CoreMetrics
internal import Logging
internal import FleetSync

/// The connections of one channel to its target, and the channel's connectivity state.
///
/// Loop-only, except `connectivity`, which observers read from any thread. Calls arrive
/// through ``start(_:)``: a ready connection with a free stream takes them (the first, or in
/// turn with round-robin); when every open connection is at the server's
/// MAX_CONCURRENT_STREAMS a new one is opened, up to `maxConnections`; beyond that, calls
/// wait here, in order, for the first stream to end on any connection. A failed connection
/// attempt puts the channel in TRANSIENT_FAILURE for the gRPC backoff; calls then fail fast
/// with the failure unless they wait for ready. A ready connection that is lost returns the
/// channel to IDLE, and the next call reconnects at once.
final class ConnectionPool: @unchecked Sendable {
  // @unchecked Sendable: loop-only state, plus `observed` behind its own lock.

  let loop: EventLoop
  let host: String
  let port: Int
  let options: ChannelOptions
  /// The keepalive interval in force: doubled after each `too_many_pings` GOAWAY.
  private(set) var keepaliveInterval: Duration?

  private var connections: [ClientConnection] = []
  private var backoff: ConnectionBackoff?
  private var retryTimer: TimerID?
  private var lastFailure: RPCError?
  private var waitingForReady: [ClientStream] = []
  /// Calls for which every connection was at the server's stream limit, with the pool at
  /// `maxConnections`: started, in order, as streams end. From `waitingHead` on; entries
  /// before it are taken.
  private var waitingForStream: [ClientStream] = []
  private var waitingHead = 0
  /// A start of the calls waiting for a stream is queued on the loop.
  private var waitingStartScheduled = false
  private var nextConnection = 0
  private var connectionsOpened = 0
  private var shutdownState: ShutdownState = .running
  private var tlsContext: Result<TLSContext, RPCError>?

  private enum ShutdownState {
    case running
    /// No new calls; waiting for the open ones to end (until the grace period's deadline).
    case draining(done: [CheckedContinuation<Void, Never>])
    case shutdown
  }

  private struct Observed {
    var state = ConnectivityState.idle
    var observers: [Int: AsyncStream<ConnectivityState>.Continuation] = [:]
    var nextObserver = 0
  }

  private let observed = PosixMutex(Observed())

  init(loop: EventLoop, host: String, port: Int, options: ChannelOptions) {
    self.loop = loop
    self.host = host
    self.port = port
    self.options = options
    self.keepaliveInterval = options.keepalive?.interval
    var logger = options.logger
    logger[metadataKey: "grpc.target"] = "\(host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")"
    self.logger = logger
    readyConnections = Meter(
      label: "rpc.client.connections", dimensions: [("server.address", "\(host):\(port)")],
      factory: options.metricsFactory)
  }

  /// The channel's logger with the target (`grpc.target`).
  let logger: Logger
  /// Ready connections (swift-metrics): up when one becomes ready, down when a ready one
  /// closes.
  private let readyConnections: Meter

  var target: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

  /// The stream limit the server announced on the last connection that became ready.
  private(set) var knownStreamLimit: Int?

  /// How many connections the pool has opened so far (for tests and diagnostics).
  var openedConnectionCount: Int { connectionsOpened }

  // MARK: Connectivity (any thread)

  var connectivity: ConnectivityState { observed.withLock { $0.state } }

  /// The current state, then every change, until shutdown.
  func connectivityStates() -> AsyncStream<ConnectivityState> {
    let (stream, continuation) = AsyncStream.makeStream(of: ConnectivityState.self)
    let finished = observed.withLock { o -> Bool in
      continuation.yield(o.state)
      if o.state == .shutdown { return true }
      let id = o.nextObserver
      o.nextObserver += 1
      o.observers[id] = continuation
      continuation.onTermination = { [weak self] _ in
        _ = self?.observed.withLock { $0.observers.removeValue(forKey: id) }
      }
      return false
    }
    if finished { continuation.finish() }
    return stream
  }

  private func setState(_ state: ConnectivityState) {
    let (observers, changed) = observed.withLock { o -> ([AsyncStream<ConnectivityState>.Continuation], Bool) in
      guard o.state != state else { return ([], false) }
      o.state = state
      let all = Array(o.observers.values)
      if state == .shutdown { o.observers.removeAll() }
      return (all, true)
    }
    guard changed else { return }
    logger.debug("connectivity changed", metadata: ["grpc.state": "\(state)"])
    for observer in observers {
      observer.yield(state)
      if state == .shutdown { observer.finish() }
    }
  }

  // MARK: Calls (loop)

  func start(_ stream: ClientStream) {
    loop.assertInLoop()
    guard stream.outcome == nil else { return }
    stream.armDeadline()
    guard case .running = shutdownState else {
      stream.fail(RPCError(code: .unavailable, message: "the channel to \(target) is closed"), reset: false)
      return
    }
    if let connection = pick() {
      connection.start(stream)
      return
    }
    if connectivity == .transientFailure {
      if stream.waitForReady {
        waitingForReady.append(stream)
      } else {
        stream.fail(failFastError(), reset: false)
      }
      return
    }
    if connections.count < options.maxConnections || connections.allSatisfy(\.goingAway) {
      openConnection().start(stream)
    } else {
      // Every connection is at its stream limit: the call waits here for the first stream
      // to end on any of them, not in one connection's queue, behind streams that may stay
      // open for hours.
      waitForStream(stream)
    }
  }

  private func waitForStream(_ stream: ClientStream) {
    waitingForStream.append(stream)
    // Calls that ended while waiting (deadline, cancellation) are dropped as the queue
    // doubles, so a queue that never moves does not grow without bound.
    let queued = waitingForStream.count - waitingHead
    if queued >= 64 && queued & (queued - 1) == 0 {
      waitingForStream = waitingForStream[waitingHead...].filter { $0.outcome == nil }
      waitingHead = 0
    }
  }

  /// Starts the calls waiting for a stream, in order, while a connection has one free (or
  /// another may be opened).
  private func startWaitingForStream() {
    while waitingHead < waitingForStream.count {
      let stream = waitingForStream[waitingHead]
      guard stream.outcome == nil else {
        waitingHead += 1
        continue
      }
      if let connection = pick() {
        waitingHead += 1
        connection.start(stream)
      } else if connections.count < options.maxConnections {
        // A connection closed: the call starts as a new one would (opening another, or
        // failing fast while the channel backs off).
        waitingHead += 1
        start(stream)
      } else {
        break
      }
    }
    if waitingHead == waitingForStream.count {
      waitingForStream.removeAll()
      waitingHead = 0
    }
  }

  /// Starts the calls waiting for a stream once the current work of the loop is done (it
  /// may be inside nghttp2's callbacks).
  private func scheduleWaitingStart() {
    guard waitingHead < waitingForStream.count, !waitingStartScheduled else { return }
    waitingStartScheduled = true
    loop.execute { [self] in
      waitingStartScheduled = false
      guard case .running = shutdownState else { return }
      startWaitingForStream()
    }
  }

  /// A ready connection with a free stream, or one still connecting (it queues the call).
  private func pick() -> ClientConnection? {
    // Every call passes here: counted in place rather than filtered into two new arrays.
    var firstUsable: ClientConnection? = nil
    var readyCount = 0
    for connection in connections where connection.hasFreeStream {
      if firstUsable == nil { firstUsable = connection }
      if connection.isReady { readyCount += 1 }
    }
    guard let firstUsable else { return nil }
    guard readyCount > 0 else { return firstUsable }
    let wanted: Int
    switch options.loadBalancing {
    case .pickFirst:
      wanted = 0
    case .roundRobin:
      nextConnection = (nextConnection + 1) % readyCount
      wanted = nextConnection
    }
    var index = 0
    for connection in connections where connection.hasFreeStream && connection.isReady {
      if index == wanted { return connection }
      index += 1
    }
    return firstUsable
  }

  private func failFastError() -> RPCError {
    let reason = lastFailure?.message ?? "the last connection attempt failed"
    return RPCError(
      code: .unavailable,
      message: "\(reason) (the channel is in TRANSIENT_FAILURE, waiting to reconnect; "
        + "calls with waitForReady wait for it)",
      cause: lastFailure)
  }

  private func openConnection() -> ClientConnection {
    let tls: (context: TLSContext, verifyName: String)?
    switch transportSecurity() {
    case .success(let value): tls = value
    case .failure(let error):
      // A configuration that cannot work: every attempt would fail the same way.
      let connection = makeConnection(tls: nil)
      loop.execute { connection.resolutionFailed(error) }
      return connection
    }
    let connection = makeConnection(tls: tls)
    if connectivity != .ready { setState(.connecting) }
    let now = MonotonicInstant.now
    if backoff == nil { backoff = ConnectionBackoff(options.backoff, now: now) }
    let timeout = backoff!.startAttempt(now: now)
    let (host, port, loop, index, balancing) = (self.host, self.port, self.loop, connectionsOpened, options.loadBalancing)
    if let numeric = SocketAddress(numericHost: host, port: port) {
      connection.connect(to: [numeric], timeout: timeout)
    } else {
      // getaddrinfo blocks: keep it off the loop thread.
      Task.detached {
        let resolved = SocketAddress.resolve(host: host, port: port)
        loop.execute {
          switch resolved {
          case .success(var addresses):
            // Round-robin spreads connections over the addresses; pick-first keeps DNS order
            // (the later addresses are the fallbacks).
            if balancing == .roundRobin, !addresses.isEmpty {
              let shift = index % addresses.count
              addresses = Array(addresses[shift...] + addresses[..<shift])
            }
            connection.connect(to: addresses, timeout: timeout)
          case .failure(let error):
            connection.resolutionFailed(error)
          }
        }
      }
    }
    return connection
  }

  private func makeConnection(tls: (context: TLSContext, verifyName: String)?) -> ClientConnection {
    let connection = ClientConnection(
      loop: loop, target: target,
      settings: HTTP2Settings(
        streamWindow: Int32(clamping: options.streamWindow),
        connectionWindow: Int32(clamping: options.connectionWindow)),
      tls: tls, keepalive: options.keepalive,
      allowInsecureCredentials: options.allowInsecureCredentials,
      logger: connectionLogger(connectionsOpened + 1))
    connection.pool = self
    connections.append(connection)
    connectionsOpened += 1
    return connection
  }

  private func connectionLogger(_ number: Int) -> Logger {
    var logger = self.logger
    logger[metadataKey: "grpc.connection"] = "\(number)"
    return logger
  }

  private func transportSecurity() -> Result<(context: TLSContext, verifyName: String)?, RPCError> {
    guard case .tls(let configuration) = options.transportSecurity else { return .success(nil) }
    if tlsContext == nil {
      tlsContext = Result { () throws(RPCError) in try TLSContext(configuration) }
    }
    return tlsContext!.map { ($0, configuration.serverHostnameOverride ?? host) }
  }

  // MARK: From connections (loop)

  func connectionReady(_ connection: ClientConnection) {
    readyConnections.increment()
    knownStreamLimit = connection.maxConcurrentStreams
    backoff?.reset(now: .now)
    lastFailure = nil
    if let retryTimer {
      loop.cancelTimer(retryTimer)
      self.retryTimer = nil
    }
    setState(.ready)
    let waiting = waitingForReady
    waitingForReady.removeAll()
    for stream in waiting { start(stream) }
    scheduleWaitingStart()
  }

  func connectionDraining(_ connection: ClientConnection, tooManyPings: Bool) {
    if tooManyPings, let interval = keepaliveInterval {
      keepaliveInterval = interval * 2
      logger.notice(
        "the server asked for fewer PINGs (too_many_pings): keepalive interval doubled",
        metadata: ["grpc.keepalive_interval": "\(interval * 2)"])
    }
    if !connections.contains(where: \.isReady) && connectivity == .ready { setState(.idle) }
  }

  /// `connection` is closed. Calls that were waiting on it get another chance (or fail fast).
  func connectionClosed(
    _ connection: ClientConnection, error: RPCError, wasReady: Bool, waiting: [ClientStream]
  ) {
    connections.removeAll { $0 === connection }
    if connection.becameReady { readyConnections.decrement() }
    // Room for another connection: the calls waiting for a stream may open it.
    scheduleWaitingStart()
    if case .draining = shutdownState, connections.isEmpty { finishShutdown() }
    guard case .running = shutdownState else {
      for stream in waiting { stream.fail(error, reset: false) }
      return
    }
    if wasReady {
      if !connections.contains(where: \.isReady) { setState(connections.isEmpty ? .idle : .connecting) }
      for stream in waiting { start(stream) }
      return
    }
    // An attempt failed before the connection was ready.
    lastFailure = error
    // Another attempt is still under way: the calls wait for it. (A draining connection does
    // not count: it takes no new calls, and counting it reconnected in a tight loop.)
    if connections.contains(where: { !$0.isClosed && !$0.goingAway }) {
      for stream in waiting { start(stream) }
      return
    }
    setState(.transientFailure)
    for stream in waiting {
      if stream.waitForReady { waitingForReady.append(stream) } else { stream.fail(failFastError(), reset: false) }
    }
    let now = MonotonicInstant.now
    if backoff == nil { backoff = ConnectionBackoff(options.backoff, now: now) }
    let retryAt = backoff!.attemptFailed(now: now)
    logger.debug(
      "backing off before the next connection attempt",
      metadata: ["grpc.backoff": "\(ClientStream.describe(now.duration(to: retryAt)))"])
    retryTimer = loop.scheduleTimer(at: retryAt) { [self] in
      retryTimer = nil
      guard case .running = shutdownState, connectivity == .transientFailure else { return }
      // Reconnect now if calls are waiting for it; else wait for the next call.
      if waitingForReady.contains(where: { $0.outcome == nil }) {
        setState(.connecting)
        let waiting = waitingForReady
        waitingForReady.removeAll()
        let connection = openConnection()
        for stream in waiting { connection.start(stream) }
      } else {
        waitingForReady.removeAll()
        setState(.idle)
      }
    }
  }

  // MARK: Shutdown (loop)

  /// Stops new calls, lets open ones finish for up to `gracePeriod`, then cancels the rest and
  /// closes every connection. Resumes `done` when nothing is left.
  func shutdown(gracePeriod: Duration, done: CheckedContinuation<Void, Never>?) {
    loop.assertInLoop()
    switch shutdownState {
    case .shutdown:
      done?.resume()
      return
    case .draining(let waiters):
      shutdownState = .draining(done: waiters + (done.map { [$0] } ?? []))
      return
    case .running:
      shutdownState = .draining(done: done.map { [$0] } ?? [])
    }
    if let retryTimer {
      loop.cancelTimer(retryTimer)
      self.retryTimer = nil
    }
    let closed = RPCError(code: .unavailable, message: "the channel to \(target) is closed")
    for stream in waitingForReady { stream.fail(closed, reset: false) }
    waitingForReady.removeAll()
    for stream in waitingForStream[waitingHead...] { stream.fail(closed, reset: false) }
    waitingForStream.removeAll()
    waitingHead = 0
    // Connections that were not ready yet have nothing worth waiting for.
    for connection in connections where !connection.isReady && !connection.goingAway {
      connection.shutDown(closed)
    }
    let cancelled = RPCError(
      code: .cancelled, message: "the channel was closed before the call finished")
    let closeNow = { [self] in
      for connection in connections { connection.cancelAll(cancelled) }
      for connection in connections { connection.shutDown(closed) }
      if connections.isEmpty { finishShutdown() }
    }
    if gracePeriod <= .zero || connections.allSatisfy({ $0.openCallCount == 0 }) {
      closeNow()
    } else {
      _ = loop.scheduleTimer(at: .now.advanced(by: gracePeriod), closeNow)
      // Connections close themselves as their last call ends (see callEnded).
    }
  }

  /// A call on `connection` ended: a call waiting for a stream may take its place; during a
  /// graceful shutdown an idle connection closes.
  func callEnded(on connection: ClientConnection) {
    scheduleWaitingStart()
    guard case .draining = shutdownState, connection.openCallCount == 0 else { return }
    // This runs inside nghttp2's stream-close callback: close once it has returned.
    loop.execute { [self] in
      guard connection.openCallCount == 0, !connection.isClosed else { return }
      connection.shutDown(RPCError(code: .unavailable, message: "the channel to \(target) is closed"))
    }
  }

  private func finishShutdown() {
    guard case .draining(let waiters) = shutdownState else { return }
    shutdownState = .shutdown
    setState(.shutdown)
    for waiter in waiters { waiter.resume() }
  }
}
