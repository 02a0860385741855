internal import CoreMetrics
internal import Logging

/// The connections of one channel to its target, and the channel's connectivity state.
///
/// Loop-only: its channel holds it as a ``LoopBound`` and reaches it on the loop or through
/// the loop's queue; its connections, loop-only too, hold it as it is. Only `observers` (the
/// connectivity state, under its own lock) is shared with other threads. Calls arrive
/// through ``start(_:)``: a ready connection with a free stream takes them (the first, or in
/// turn with round-robin); when every open connection is at the server's
/// MAX_CONCURRENT_STREAMS a new one is opened, up to `maxConnections`; beyond that, calls
/// wait here, in order, for the first stream to end on any connection. A failed connection
/// attempt puts the channel in TRANSIENT_FAILURE for the gRPC backoff; calls then fail fast
/// with the failure unless they wait for ready. A ready connection that is lost returns the
/// channel to IDLE, and the next call reconnects at once (or the pool itself, while someone
/// waits for a ready connection: ``whenReady(_:)``).
final class ConnectionPool {
  // Not Sendable: loop-only (see above), so the compiler keeps it from other threads.

  let loop: EventLoop
  let host: String
  let port: Int
  let options: ChannelOptions
  /// The keepalive interval in force: doubled after each `too_many_pings` GOAWAY.
  private(set) var keepaliveInterval: Duration?

  /// The pool's connections. This, the balancer, the shutdown state and the calls waiting
  /// for a stream are read for every call's start and end: their exclusivity is not checked
  /// at run time, as they are loop-only and no access to one of them spans a call that
  /// reaches it again (the balancer only reads the connections it is handed).
  @exclusivity(unchecked) var connections: [ClientConnection] = []
  var backoff: ConnectionBackoff?
  var retryTimer: TimerID?
  /// After a failed attempt while other connections serve: no connection is opened before
  /// this (the backoff's next attempt), so calls waiting for a stream do not reconnect in a
  /// tight loop to a server that turns connections away.
  private var openingPausedUntil: MonotonicInstant?
  private var lastFailure: RPCError?
  /// Calls with waitForReady while the channel backs off: started when a connection is
  /// ready, or else when the backoff ends (`retryTimer`, pending while any wait). Calls that
  /// end meanwhile (their deadline, a cancel) are pruned as the queue doubles, so calls that
  /// time out at a high rate through a long outage do not pile up.
  var waitingForReady = CallQueue<ClientStream>()
  /// Run, once each, when a connection next becomes ready (``whenReady(_:)``); while any
  /// wait, the channel keeps connecting as for calls with waitForReady.
  var readyWaiters: [@Sendable () -> Void] = []
  /// Calls refused more than once, waiting to be sent again (``start(_:after:)``): the
  /// pool's until then, so that a shutdown meanwhile ends them.
  var retryingLater: [ClientStream] = []
  /// Calls for which every connection was at the server's stream limit, with the pool at
  /// `maxConnections`: started, in order, as streams end. From `waitingHead` on; entries
  /// before it are taken.
  @exclusivity(unchecked) var waitingForStream = CallQueue<ClientStream>()
  /// A start of the calls waiting for a stream is queued on the loop.
  private var waitingStartScheduled = false
  /// The calls waiting for a stream are being started (``startWaitingCalls()``).
  @exclusivity(unchecked) private var startingWaitingCalls = false
  @exclusivity(unchecked) private var balancer: LoadBalancer
  /// The connections holding a place of ``ChannelOptions/sharedConnections``.
  var placeHolders = Set<ObjectIdentifier>()
  var connectionsOpened = 0
  @exclusivity(unchecked) var shutdownState: ShutdownState = .running
  var tlsContext: Result<TLSContext, RPCError>?
  /// The TLS context of an `https://` proxy, made with the first connection through it.
  var proxyTLSContext: Result<TLSContext, RPCError>?
  /// The proxy connections go through (nil: straight to the target), from
  /// ``ChannelOptions/proxy`` and the environment when the channel was made; a failure when
  /// its URL is unusable, which every connection attempt then reports.
  let proxy: Result<HTTPProxy?, RPCError>

  enum ShutdownState {
    case running
    /// No new calls; waiting for the open ones to end (until the grace period's deadline).
    case draining(done: [CheckedContinuation<Void, Never>])
    case shutdown
  }

  /// The channel's connectivity and its watchers, which the channel reads from any thread.
  let observers = ConnectivityObservers()

  init(loop: EventLoop, host: String, port: Int, options: ChannelOptions) {
    self.loop = loop
    self.host = host
    self.port = port
    self.options = options
    balancer = LoadBalancer(policy: options.loadBalancing)
    proxy = Result { () throws(RPCError) in
      try ProxyRoute.proxy(options.proxy, host: host, port: port)
    }
    self.keepaliveInterval = options.keepalive?.interval
    var logger = options.logger
    logger[metadataKey: "grpc.target"] = "\(host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")"
    self.logger = logger
    readyConnections = Meter(
      label: "rpc.client.connections", dimensions: [("server.address", "\(host):\(port)")],
      factory: options.metricsFactory)
    // Strong: the budget lets go of it when the pool shuts down.
    let pool = LoopBound(self, on: loop)
    options.sharedConnections?.wake(ObjectIdentifier(self)) {
      pool.loop.execute { pool.value.scheduleWaitingStart() }
    }
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
  /// Calls waiting for a stream, ended ones perhaps included (for tests).
  var callsWaitingForStream: Int { waitingForStream.storedCount }
  /// Calls waiting for the channel to be ready, ended ones perhaps included (for tests).
  var callsWaitingForReady: Int { waitingForReady.storedCount }

  // MARK: Connectivity

  var connectivity: ConnectivityState { observers.state }

  func setState(_ state: ConnectivityState) {
    guard observers.set(state) else { return }
    logger.debug("connectivity changed", metadata: ["grpc.state": "\(state)"])
  }

  // MARK: Calls (loop)

  func start(_ stream: ClientStream) {
    loop.checkInLoop()
    guard !stream.ended else { return }
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
    if let connection = openWithinLimits() {
      connection.start(stream)
    } else {
      // Every connection is at its stream limit: the call waits here for the first stream
      // to end on any of them, not in one connection's queue, behind streams that may stay
      // open for hours.
      waitingForStream.append(stream)
    }
  }

  /// Runs `body` on the loop once a connection next becomes ready — a connection that is
  /// ready already does not count: the caller has just seen it fail — and until then keeps
  /// the channel connecting: at once when it is idle, after the backoff when the last attempt
  /// failed, and again whenever a connection is lost. Dropped at shutdown, never run.
  func whenReady(_ body: @escaping @Sendable () -> Void) {
    loop.checkInLoop()
    guard case .running = shutdownState else { return }
    readyWaiters.append(body)
    if connectivity == .idle && connections.isEmpty { _ = openConnection() }
  }

  /// Starts `stream` again after `delay` (a transparent retry that backs off). Until then
  /// no connection holds it, so the pool does: a shutdown meanwhile fails it rather than
  /// leaving it to a timer that a stopped loop never fires.
  func start(_ stream: ClientStream, after delay: Duration) {
    loop.checkInLoop()
    retryingLater.append(stream)
    _ = loop.scheduleTimer(at: .now.advanced(by: delay)) { [self] in
      guard let index = retryingLater.firstIndex(where: { $0 === stream }) else { return }
      retryingLater.remove(at: index)
      start(stream)
    }
  }

  /// Whether another connection may be opened: connections going away (GOAWAY received) take
  /// no new calls, so they do not count against ``ChannelOptions/maxConnections``; else the
  /// calls waiting for a stream would wait for them to finish every stream, which for
  /// long-lived streams may be hours.
  var hasRoomForConnection: Bool {
    // The pause after a failed attempt holds only while another connection serves: with
    // none left, calls would wait for nothing.
    if let until = openingPausedUntil, MonotonicInstant.now < until,
      connections.contains(where: { $0.isReady && !$0.goingAway })
    {
      return false
    }
    let live = liveConnectionCount
    guard live > 0, let shared = options.sharedConnections else { return live < options.maxConnections }
    return live < options.maxConnections && shared.free > 0
  }

  /// The connections that count against the limits: all but those going away.
  var liveConnectionCount: Int { connections.count { !$0.goingAway } }

  /// Starts the calls waiting for a stream, in order, while a connection has one free (or
  /// another may be opened).
  private func startWaitingForStream() {
    while let stream = waitingForStream.first() {
      if let connection = pick() {
        waitingForStream.removeFirst()
        connection.start(stream)
      } else if hasRoomForConnection {
        // A connection closed or is going away: the call starts as a new one would (opening
        // another, or failing fast while the channel backs off).
        waitingForStream.removeFirst()
        start(stream)
      } else {
        break
      }
    }
  }

  /// Starts the calls waiting for a stream once the current work of the loop is done: for
  /// a connection closing or going away (its teardown finishes first), timers and wake-ups.
  func scheduleWaitingStart() {
    guard !waitingForStream.isEmpty, !waitingStartScheduled else { return }
    waitingStartScheduled = true
    let pool = LoopBound(self, on: loop)
    loop.execute {
      let pool = pool.value
      pool.waitingStartScheduled = false
      pool.startWaitingCalls()
    }
  }

  /// Starts the calls waiting for a stream now: outside nghttp2's callbacks (a session hands
  /// its events over once mem_recv or mem_send has returned), so they may be submitted to a
  /// session, the one handing over included. A call that ends as it starts comes back here:
  /// the start under way goes on with the rest.
  func startWaitingCalls() {
    loop.checkOutsideCallbacks()
    guard !waitingForStream.isEmpty, !startingWaitingCalls, case .running = shutdownState else {
      return
    }
    startingWaitingCalls = true
    defer { startingWaitingCalls = false }
    startWaitingForStream()
  }

  /// A ready connection with a free stream, or one still connecting (it queues the call).
  private func pick() -> ClientConnection? {
    balancer.pick(from: connections)
  }

  private func failFastError() -> RPCError {
    let reason = lastFailure?.message ?? "the last connection attempt failed"
    return RPCError(
      code: .unavailable,
      message: "\(reason) (the channel is in TRANSIENT_FAILURE, waiting to reconnect; "
        + "calls with waitForReady wait for it)",
      cause: lastFailure)
  }

  // MARK: From connections (loop)

  func connectionReady(_ connection: ClientConnection) {
    readyConnections.increment()
    knownStreamLimit = connection.maxConcurrentStreams
    backoff?.reset(now: .now)
    openingPausedUntil = nil
    lastFailure = nil
    if let retryTimer {
      loop.cancelTimer(retryTimer)
      self.retryTimer = nil
    }
    setState(.ready)
    for stream in waitingForReady.removeAll() { start(stream) }
    scheduleWaitingStart()
  }

  /// Runs the ``whenReady(_:)`` waiters, at once: `connection` calls it once it has placed
  /// the calls that waited for its server's SETTINGS (outside nghttp2's callbacks, like all
  /// frame handling), so the calls a waiter starts queue behind those.
  func runReadyWaiters() {
    loop.checkOutsideCallbacks()
    guard !readyWaiters.isEmpty else { return }
    for waiter in readyWaiters.exchange([]) { waiter() }
  }

  func connectionDraining(_ connection: ClientConnection, tooManyPings: Bool) {
    if tooManyPings, let interval = keepaliveInterval {
      keepaliveInterval = interval * 2
      logger.notice(
        "the server asked for fewer PINGs (too_many_pings): keepalive interval doubled",
        metadata: ["grpc.keepalive_interval": "\(interval * 2)"])
    }
    if !connections.contains(where: \.isReady) && connectivity == .ready { setState(.idle) }
    givePlaceBack(of: connection)
    // It no longer counts against the most connections: calls waiting for a stream may open
    // another.
    scheduleWaitingStart()
  }

  /// `connection` is closed. Calls that were waiting on it get another chance (or fail fast).
  func connectionClosed(
    _ connection: ClientConnection, error: RPCError, wasReady: Bool, waiting: [ClientStream]
  ) {
    connections.removeAll { $0 === connection }
    givePlaceBack(of: connection)
    if connection.becameReady { readyConnections.decrement() }
    // Room for another connection: the calls waiting for a stream may open it.
    scheduleWaitingStart()
    if case .draining = shutdownState, connections.isEmpty { finishShutdown() }
    guard case .running = shutdownState else {
      for stream in waiting { stream.fail(error, reset: false) }
      return
    }
    if wasReady {
      if !connections.contains(where: \.isReady) {
        setState(connections.isEmpty ? .idle : .connecting)
      }
      for stream in waiting { start(stream) }
      // Someone waits for a ready connection: make one, as a waiting call would.
      if !readyWaiters.isEmpty && connections.isEmpty { _ = openConnection() }
      return
    }
    // An attempt failed before the connection was ready.
    lastFailure = error
    // Another connection serves, or another attempt is still under way: the calls go there
    // (or wait for a stream), and no connection is opened before the backoff says. (A
    // draining connection does not count: it takes no new calls, and counting it reconnected
    // in a tight loop.)
    if connections.contains(where: { !$0.isClosed && !$0.goingAway }) {
      pauseOpening()
      for stream in waiting { start(stream) }
      return
    }
    setState(.transientFailure)
    for stream in waiting {
      if stream.waitForReady { waitingForReady.append(stream) } else { stream.fail(failFastError(), reset: false) }
    }
    let now = MonotonicInstant.now
    let retryAt = nextAttempt(afterFailureAt: now)
    logger.debug(
      "backing off before the next connection attempt",
      metadata: ["grpc.backoff": "\(ClientStream.describe(now.duration(to: retryAt)))"])
    // A backoff under way (the channel left TRANSIENT_FAILURE, and this attempt failed too):
    // the new one, longer, replaces it.
    if let retryTimer { loop.cancelTimer(retryTimer) }
    retryTimer = loop.scheduleTimer(at: retryAt) { [self] in
      retryTimer = nil
      backoffEnded()
    }
  }

  /// The backoff after a failed attempt is over: the calls waiting for ready start as new
  /// calls would, whatever the channel did meanwhile — a ready connection that closed (one
  /// draining while the attempts failed) set it IDLE, a new call may be connecting. Calls left
  /// waiting for this timer have no other way out before their deadline.
  private func backoffEnded() {
    guard case .running = shutdownState else { return }
    let waiting = waitingForReady.removeAll()
    // Nobody waits: the next call reconnects.
    guard !waiting.isEmpty || !readyWaiters.isEmpty else {
      if connectivity == .transientFailure { setState(.idle) }
      return
    }
    // Someone waits: reconnect now, unless a connection is under way (the calls join it).
    if connectivity == .transientFailure || liveConnectionCount == 0 { _ = openConnection() }
    for stream in waiting { start(stream) }
  }

  /// A connection attempt failed while others serve: opening waits for the backoff, then the
  /// calls waiting for a stream may try again.
  private func pauseOpening() {
    let retryAt = nextAttempt(afterFailureAt: .now)
    openingPausedUntil = retryAt
    // The pause ends by itself (hasRoomForConnection compares the time); this only wakes the
    // calls waiting for a stream.
    _ = loop.scheduleTimer(at: retryAt) { [self] in scheduleWaitingStart() }
  }

  /// A connection attempt failed at `now`: when the backoff allows the next one.
  private func nextAttempt(afterFailureAt now: MonotonicInstant) -> MonotonicInstant {
    if backoff == nil { backoff = ConnectionBackoff(options.backoff, now: now) }
    return backoff!.attemptFailed(now: now)
  }
}
