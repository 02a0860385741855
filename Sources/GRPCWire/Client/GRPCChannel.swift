public import ProtoRuntime
internal import FleetSync
internal import Synchronization
internal import Logging

/// A gRPC client for one target (`host:port`), over plaintext HTTP/2 or TLS.
///
/// Calls of all four kinds may be made from any task, concurrently. They share the channel's
/// connections (see ``ChannelOptions``): opened on the first call, more when the server's
/// stream limit is reached, replaced when lost — with gRPC's connection backoff after a failed
/// attempt, during which calls fail fast with UNAVAILABLE unless they set `waitForReady`. Name
/// resolution runs off the event loop. Every failure a call reports is an ``RPCError``.
///
/// Unless given an event loop, the channel runs its own loop thread, which ``close()`` ends:
/// after it no thread, socket or nghttp2 session of the channel remains.
public final class GRPCChannel: Sendable {
  /// The host and port calls go to.
  public let host: String
  public let port: Int
  public let options: ChannelOptions
  let loop: EventLoop
  /// Reached on `loop` only (checked on every access), through its queue from elsewhere.
  let pool: LoopBound<ConnectionPool>
  /// The pool's connectivity state and its observers: any thread.
  private let connectivity: ConnectivityObservers
  /// `host:port` (IPv6 in brackets), as logs and interceptors name the target.
  let target: String
  /// The channel's logger with the target (`grpc.target`).
  let logger: Logger
  /// The service config's retry and hedging policies and the retry throttle; nil (one check
  /// per call) when the config has no such policy.
  let policies: CallPolicies?
  private let ownsLoop: Bool
  private let closed = Atomic<Bool>(false)
  /// Whether ``close()`` has run. Any thread.
  var isClosed: Bool { closed.load(ordering: .relaxed) }
  private let loopStopped = Atomic<Bool>(false)
  private let baseHeaders: [HeaderField]
  private let headerPrefixes = PosixMutex<[RequestHeaderPrefix]>([])

  /// The event loop that owns the channel's connections. Tasks that make many calls should
  /// prefer it (`Task(executorPreference: channel.eventLoop) { … }`,
  /// `group.addTask(executorPreference: channel.eventLoop)`): their calls then start and
  /// complete on the loop thread with no thread hop, which is most of a small call's cost.
  /// Their code must not block.
  public var eventLoop: EventLoop { loop }

  /// How many streams the channel's connections may hold at once: the connections it may
  /// have (``ChannelOptions/maxConnections``, or its share of
  /// ``ChannelOptions/sharedConnections`` now) times the server's MAX_CONCURRENT_STREAMS, as
  /// its last connection to become ready announced it; nil until one has. Calls beyond it wait for a stream to end,
  /// so a caller that keeps streams open for long holds it under this. Read on the
  /// channel's loop only (stops the process elsewhere).
  public var streamCapacity: Int? {
    loop.preconditionInEventLoop("GRPCChannel.streamCapacity")
    let pool = self.pool.value
    guard let limit = pool.knownStreamLimit else { return nil }
    let (capacity, overflow) = pool.reachableConnections.multipliedReportingOverflow(by: limit)
    return overflow ? .max : capacity
  }

  /// The version sent in `user-agent`.
  public static let version = "0.1.0"

  /// A channel to `host:port`; nothing is connected until the first call. With no
  /// `eventLoop`, the channel starts (and owns) a loop thread of its own.
  public init(
    host: String, port: Int, options: ChannelOptions = ChannelOptions(),
    eventLoop: EventLoop? = nil
  ) {
    self.host = host
    self.port = port
    self.options = options
    self.loop = eventLoop ?? EventLoop(name: "grpc-\(host)")
    self.ownsLoop = eventLoop == nil
    // Made here, used only on the loop from now on.
    let pool = ConnectionPool(loop: loop, host: host, port: port, options: options)
    (connectivity, target, logger) = (pool.observers, pool.target, pool.logger)
    self.pool = LoopBound(pool, on: loop)
    self.policies = CallPolicies(options)
    let authority: String
    if case .tls(let tls) = options.transportSecurity, let name = tls.serverHostnameOverride {
      authority = name
    } else {
      authority = target
    }
    let userAgent = [options.userAgentPrefix, "grpc-swift-fleetconsumer/\(Self.version)"]
      .compactMap { $0 }.joined(separator: " ")
    let scheme: String
    if case .tls = options.transportSecurity { scheme = "https" } else { scheme = "http" }
    baseHeaders = [
      HeaderField(name: ":method", value: "POST"),
      HeaderField(name: ":scheme", value: scheme),
      HeaderField(name: ":authority", value: authority),
      HeaderField(name: "content-type", value: "application/grpc"),
      HeaderField(name: "te", value: "trailers"),
      HeaderField(name: "user-agent", value: userAgent),
      HeaderField(name: "grpc-accept-encoding", value: "identity,gzip"),
    ]
  }

  deinit {
    if ownsLoop && !loopStopped.load(ordering: .acquiring) {
      let pool = self.pool
      loop.execute { pool.value.shutdown(gracePeriod: .zero, done: nil) }
      loop.shutdown()
    }
  }

  /// The channel's connectivity now.
  public var connectivityState: ConnectivityState { connectivity.state }

  /// The channel's connectivity: the current state, then every change, ending at SHUTDOWN.
  public var connectivityStates: AsyncStream<ConnectivityState> { connectivity.states() }

  /// Runs `body` on the channel's loop once a connection next becomes ready, and until then
  /// keeps the channel connecting (with gRPC's connection backoff between failed attempts)
  /// even when no call is made: what a caller backing off after a network error waits for,
  /// to try again as soon as the network is back rather than when its backoff ends. A
  /// connection ready already does not count. Callable from any thread; `body` runs at most
  /// once, and never if the channel closes first.
  public func whenReady(_ body: @escaping @Sendable () -> Void) {
    let pool = self.pool
    if loop.inEventLoop {
      pool.value.whenReady(body)
    } else {
      loop.execute { pool.value.whenReady(body) }
    }
  }

  /// Closes the channel at once: new calls fail with UNAVAILABLE, calls in flight end
  /// CANCELLED (their streams reset), connections are closed with a GOAWAY, and the channel's
  /// own loop thread ends before this returns.
  public func close() {
    guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
    let pool = self.pool
    loop.execute { pool.value.shutdown(gracePeriod: .zero, done: nil) }
    stopOwnedLoop()
  }

  /// Closes the channel gracefully: new calls fail with UNAVAILABLE at once, calls in flight
  /// may finish for up to `gracePeriod`, the rest are then cancelled. Returns once every
  /// connection is closed and the channel's own loop thread has ended (at once when it has
  /// already: the channel was closed before).
  public func close(gracePeriod: Duration) async {
    closed.store(true, ordering: .releasing)
    let pool = self.pool
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      if !loop.execute({ pool.value.shutdown(gracePeriod: gracePeriod, done: done) }) {
        done.resume()
      }
    }
    stopOwnedLoop()
  }

  private func stopOwnedLoop() {
    guard ownsLoop, !loopStopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
    // The loop runs the shutdown queued above before it stops.
    loop.shutdown()
  }

  // MARK: Making calls

  /// A stream for a call to `path`, its request headers built and checked.
  /// `oneResponse`: a unary or client-streaming call, ended at once by a second response.
  func makeStream(
    path: String, options: CallOptions, firstRequest: [UInt8], requestsFinished: Bool,
    oneResponse: Bool
  ) throws(RPCError) -> ClientStream {
    try makeStream(
      prepare(path: path, options: options, loopDriven: false), firstRequest, requestsFinished,
      oneResponse: oneResponse)
  }

  /// A stream for a call `prepared` describes; throws what ``checkStart(_:_:deadline:)``
  /// does, but for the deadline, which a call made in a task checks as it waits.
  func makeStream(
    _ prepared: PreparedCall, _ firstRequest: [UInt8], _ requestsFinished: Bool, oneResponse: Bool
  ) throws(RPCError) -> ClientStream {
    try checkStart(prepared, firstRequest, deadline: false)
    return stream(prepared, firstRequest, requestsFinished, oneResponse: oneResponse)
  }

  /// A stream for a call `prepared` describes, once the checks of
  /// ``checkStart(_:_:deadline:)`` have passed. `loopDriven`: a ``LoopCall``'s, whose state
  /// is loop-confined (``ClientStream/loopDriven``).
  func stream(
    _ prepared: PreparedCall, _ firstRequest: [UInt8], _ requestsFinished: Bool, oneResponse: Bool,
    loopDriven: Bool = false
  ) -> ClientStream {
    ClientStream(
      loop: loop, headerPrefix: prepared.headerPrefix, requestHeaders: prepared.headers,
      initialRequest: firstRequest,
      finished: requestsFinished,
      maxReceiveSize: prepared.maxReceiveSize, maxSendSize: prepared.maxSendSize,
      timeout: prepared.timeout, carriesCredentials: prepared.carriesCredentials,
      waitForReady: prepared.waitForReady, oneResponse: oneResponse, loopDriven: loopDriven)
  }

  /// Checks `options` for a call of `method` and lays out its request fields: what every
  /// call does first, and what a call made again and again
  /// (``startUnary(_:framedRequest:as:completion:)``) does once. Any thread.
  ///
  /// Throws what would make the call impossible: invalid metadata, credentials over
  /// plaintext to a host that is not loopback (unless ``ChannelOptions/allowInsecureCredentials``).
  ///
  /// The interceptors are told the call is of `method`'s kind.
  public func prepare<Request, Response>(
    _ method: ProtoMethod<Request, Response>, options: CallOptions = CallOptions()
  ) throws(RPCError) -> PreparedCall {
    try prepare(path: method.path, options: options, kind: CallKind(method.kind))
  }

  /// ``prepare(_:options:)`` for the method at `path` (`/package.Service/Method`): for a
  /// call whose messages are not ``ProtoMessage``s. Any thread.
  ///
  /// The channel's and the options' interceptors are part of the prepared call: when they are
  /// all ``LoopClientInterceptor``s, their ``LoopClientInterceptor/prepare(_:)`` runs here,
  /// once, and what it throws is thrown here. `kind` is what they are told of the call
  /// (``CallKind/serverStreaming`` for ``startServerStreaming(_:_:prepared:compress:receiver:)``).
  public func prepare(path: String, options: CallOptions, kind: CallKind = .unary)
    throws(RPCError) -> PreparedCall
  {
    try prepare(path: path, options: options, loopDriven: true, kind: kind)
  }

  /// ``prepare(path:options:kind:)``; with `loopDriven` false (a call made in a task, whose
  /// interceptors have already run) without the interceptors.
  func prepare(path: String, options: CallOptions, loopDriven: Bool, kind: CallKind = .unary)
    throws(RPCError) -> PreparedCall
  {
    // The service config's settings for the method, when the channel has one: a channel
    // without pays one nil check per call.
    if let method = self.options.serviceConfig?.methodConfig(for: MethodDescriptor(path: path)) {
      return try prepared(
        path: path, options: method.applied(to: options), loopDriven: loopDriven, kind: kind)
    }
    return try prepared(path: path, options: options, loopDriven: loopDriven, kind: kind)
  }

  /// ``prepare(path:options:loopDriven:kind:)`` for options the service config has already been
  /// applied to.
  func prepared(
    path: String, options: CallOptions, loopDriven: Bool = false, kind: CallKind = .unary
  ) throws(RPCError) -> PreparedCall {
    var options = options
    var interception: Interception? = nil
    if loopDriven {
      let interceptors = interceptors(of: options)
      if !interceptors.isEmpty {
        var call = ClientCall(
          method: MethodDescriptor(path: path), kind: kind, target: target,
          options: options)
        interception = try Interception(&call, interceptors: interceptors)
        options = call.options
      }
    }
    let carriesCredentials = !options.metadata["authorization"].isEmpty
    if carriesCredentials, case .plaintext = self.options.transportSecurity,
      !self.options.allowInsecureCredentials,
      let address = SocketAddress(numericHost: host, port: port), !address.isLoopback
    {
      // Refused before any connection: not even a SYN goes to that address for this call.
      throw RPCError.insecureCredentials(to: "\(address)")
    }
    do {
      try options.metadata.validate()
    } catch {
      throw RPCError.invalidMetadata(error)
    }
    // Only the call's own fields are built per call; the rest is laid out once per method.
    var headers: [HeaderField] = []
    let extraCount =
      (options.timeout == nil ? 0 : 1) + (options.compression == nil ? 0 : 1)
      + options.metadata.count
    if extraCount > 0 { headers.reserveCapacity(extraCount) }
    if let timeout = options.timeout {
      headers.append(HeaderField(name: "grpc-timeout", value: GRPCTimeout.encode(timeout)))
    }
    if let compression = options.compression {
      headers.append(HeaderField(name: "grpc-encoding", value: compression.rawValue))
    }
    for (name, value) in options.metadata.headerFields() {
      headers.append(HeaderField(name: name, value: value))
    }
    return PreparedCall(
      headerPrefix: headerPrefix(for: path), headers: headers, timeout: options.timeout,
      maxReceiveSize: options.maxReceiveMessageSize ?? self.options.maxReceiveMessageSize,
      maxSendSize: options.maxSendMessageSize ?? .max,
      waitForReady: options.waitForReady, carriesCredentials: carriesCredentials,
      compresses: options.compression != nil, interception: interception)
  }

  /// The fixed request fields of calls to `path`, made on the first call and kept: a channel
  /// calls a handful of methods, so a short list searched by `==` (the same string object
  /// for a method's static path) beats hashing the path.
  private func headerPrefix(for path: String) -> RequestHeaderPrefix {
    if let known = headerPrefixes.withLock({ list in list.first { $0.path == path } }) {
      return known
    }
    var fields = baseHeaders
    fields.insert(HeaderField(name: ":path", value: path), at: 2)
    let prefix = RequestHeaderPrefix(path: path, fields: fields)
    headerPrefixes.withLock { list in
      // Bounded: a channel used with ever new paths keeps only the latest ones.
      if list.count >= Self.headerPrefixLimit { list.removeFirst() }
      list.append(prefix)
    }
    return prefix
  }

  private static let headerPrefixLimit = 16

  /// Starts `stream`, runs `body` with cancellation wired to a stream reset, and makes sure the
  /// stream is over (reset with CANCEL) when `body` leaves early.
  nonisolated(nonsending) func run<R>(
    _ stream: ClientStream, _ body: nonisolated(nonsending) () async throws -> R
  ) async throws -> R {
    try launch(stream)
    return try await supervise(stream, body)
  }

  /// Hands `stream` to the pool, unless the task is cancelled or the deadline has passed.
  @inline(__always)
  func launch(_ stream: ClientStream) throws(RPCError) {
    if Task.isCancelled {
      throw RPCError(code: .cancelled, message: "the call's task was cancelled before it started")
    }
    if let timeout = stream.timeout, timeout <= .zero {
      throw RPCError(code: .deadlineExceeded, message: "the call's deadline had passed before it started")
    }
    let pool = self.pool
    if loop.inEventLoop {
      // A task on the loop (one that prefers it): hand the call over now. Task code never runs
      // inside nghttp2's callbacks, so the session is free; no closure, no queue.
      pool.value.start(stream)
    } else {
      loop.execute { pool.value.start(stream) }
    }
  }

  /// Runs `body` for a launched `stream` (``launch(_:)``), with cancellation wired to a stream
  /// reset, and makes sure the stream is over (reset with CANCEL) when `body` leaves early.
  @inline(__always)
  nonisolated(nonsending) func supervise<R>(
    _ stream: ClientStream, _ body: nonisolated(nonsending) () async throws -> R
  ) async throws -> R {
    do {
      let result = try await withTaskCancellationHandler {
        try await body()
      } onCancel: {
        stream.cancel(RPCError(code: .cancelled, message: "the call's task was cancelled"))
      }
      if stream.outcome == nil {
        stream.cancel(RPCError(code: .cancelled, message: "the caller stopped reading responses"))
      }
      return result
    } catch {
      if stream.outcome == nil {
        stream.cancel(RPCError(code: .cancelled, message: "the caller's code threw: \(error)"))
      }
      // A task cancelled while waiting in its own code (a sleep, say) ends the call as
      // CANCELLED, like one cancelled while waiting for the server.
      if error is CancellationError {
        throw RPCError(code: .cancelled, message: "the call's task was cancelled")
      }
      throw error
    }
  }
}

extension CallKind {
  /// The kind of call `kind` (a ``ProtoMethod``'s) is.
  init(_ kind: ProtoMethod<some ProtoMessage, some ProtoMessage>.Kind) {
    self =
      switch kind {
      case .unary: .unary
      case .serverStreaming: .serverStreaming
      case .clientStreaming: .clientStreaming
      case .bidirectionalStreaming: .bidirectionalStreaming
      }
  }
}
