internal import FleetSync

/// A gRPC server on our HTTP/2 transport: nghttp2 server sessions on an event loop, routing
/// `:path` to handlers of the four call kinds.
///
/// Register handlers, then ``start(host:port:)``; handlers run as tasks, one per call, except
/// unary handlers registered with `registerOnLoop`, which run on the event loop with no task. A
/// handler that throws an ``RPCError`` answers with its status (and details); any other
/// error answers UNKNOWN. A client's RST_STREAM or a passed deadline cancels the handler's
/// task. ``shutdown(gracePeriod:)`` sends GOAWAY, lets calls finish, then ends them.
public final class GRPCServer: Sendable {
  /// Reached on its loop only (`core.loop`), through that loop's queue.
  let core: LoopBound<ServerCore>
  /// Every loop connections are served on, `core.loop` first.
  let loops: [EventLoop]
  let options: ServerOptions
  /// The loops shutdown ends: those the server made.
  private let ownedLoops: [EventLoop]
  private let handlers = PosixMutex<[String: ServerMethod]>([:])
  private let started = PosixMutex(false)

  /// Whether ``start(host:port:)`` has bound the server's port.
  var isStarted: Bool { started.withLock { $0 } }

  /// With no `eventLoop` the server runs its own loop threads (``ServerOptions/eventLoops``),
  /// which shutdown ends; with one, it accepts and serves on it, and ends only the loops it
  /// made for ``ServerOptions/eventLoops`` beyond the first.
  public init(options: ServerOptions = ServerOptions(), eventLoop: EventLoop? = nil) {
    let first = eventLoop ?? EventLoop(name: "grpc-server")
    let more = (1..<max(options.eventLoops, 1)).map { EventLoop(name: "grpc-server-\($0)") }
    // Made here, used only on its loop from now on.
    core = LoopBound(ServerCore(loops: [first] + more, options: options), on: first)
    loops = [first] + more
    self.options = options
    ownedLoops = eventLoop == nil ? [first] + more : more
  }

  // MARK: Handlers (the `register` methods are in GRPCServer+Handlers.swift)

  /// Routes `path` to `body`, inside the server's and `interceptors`; the call ends with
  /// OK when `body` returns, else with the status of what it threw.
  func add(
    _ path: String, _ interceptors: [any ServerInterceptor],
    _ body: @escaping @Sendable (ServerStream, ServerContext) async throws -> Void
  ) {
    let handler = task(interceptors, body)
    handlers.withLock { $0[path] = .task(handler) }
  }

  /// Routes `path` to a unary method answered on the loop by `answer` (see ``LoopHandler``),
  /// or, with interceptors (which are async), by `body` in a task as ``add(_:_:_:)`` does.
  func addOnLoop(
    _ path: String, _ interceptors: [any ServerInterceptor],
    answer: @escaping @Sendable (ServerStream, ServerContext) throws -> Void,
    _ body: @escaping @Sendable (ServerStream, ServerContext) async throws -> Void
  ) {
    let handler = task(interceptors, body)
    let method: ServerMethod =
      options.interceptors.isEmpty && interceptors.isEmpty
      ? .onLoop(LoopHandler(answer: answer, task: handler)) : .task(handler)
    handlers.withLock { $0[path] = method }
  }

  /// `body` as a call's task: inside the interceptors, then the status.
  private func task(
    _ interceptors: [any ServerInterceptor],
    _ body: @escaping @Sendable (ServerStream, ServerContext) async throws -> Void
  ) -> ServerHandler {
    let chain = options.interceptors + interceptors
    return { stream, context in
      do {
        if chain.isEmpty {
          try await body(stream, context)
        } else {
          try await intercept(chain[...], context) { context in try await body(stream, context) }
        }
        stream.finish(.ok, trailers: context.trailingMetadata)
      } catch {
        stream.finish(Status(handlerError: error), trailers: context.trailingMetadata)
      }
    }
  }

  /// The services (`package.Service`) with a method registered, sorted: what reflection
  /// lists and health reports on.
  public var registeredServices: [String] {
    let paths = handlers.withLock { Array($0.keys) }  // `/package.Service/Method`
    return Set(paths.compactMap { $0.split(separator: "/").first.map(String.init) }).sorted()
  }

  // MARK: Running

  /// Binds `host:port` (port 0: one the OS picks) and serves; returns the bound port.
  /// Throws UNAVAILABLE when the address cannot be bound, FAILED_PRECONDITION when the
  /// server's event loop has stopped (the server was shut down, or the loop it was given).
  public func start(host: String = "127.0.0.1", port: Int = 0) async throws -> Int {
    let handlers = self.handlers.withLock { $0 }
    let core = self.core
    let port = try await withCheckedThrowingContinuation { continuation in
      let queued = core.loop.execute {
        continuation.resume(with: Result { () throws(RPCError) in
          try core.value.listen(host: host, port: port, handlers: handlers)
        })
      }
      if !queued { continuation.resume(throwing: Self.loopStopped) }
    }
    started.withLock { $0 = true }
    return port
  }

  /// Sends GOAWAY on every open connection while the server keeps listening: calls in flight
  /// finish, new ones come on new connections. For fault injection and load shedding.
  public func goAway() {
    let core = self.core
    core.loop.execute { core.value.goAwayAll() }
  }

  /// Stops accepting, sends GOAWAY, lets calls finish for up to `gracePeriod`, then cancels the
  /// rest and closes every connection (and the server's own loop thread). Returns at once
  /// when the server's loop has stopped already (a second shutdown): nothing is left open.
  public func shutdown(gracePeriod: Duration = .seconds(5)) async {
    let core = self.core
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      if !core.loop.execute({ core.value.shutdown(gracePeriod: gracePeriod, done: done) }) {
        done.resume()
      }
    }
    for loop in ownedLoops { loop.shutdown() }
  }

  static let loopStopped = RPCError(
    code: .failedPrecondition, message: "the server's event loop has stopped: it cannot start")
}

typealias ServerHandler = @Sendable (ServerStream, ServerContext) async -> Void

/// How the calls of one method are served.
enum ServerMethod: Sendable {
  /// Each call by its own task, started with the call.
  case task(ServerHandler)
  /// On the connection's loop, once the request has arrived (a unary call, no interceptors).
  case onLoop(LoopHandler)
}

/// A unary method answered on the connection's event loop, with no task: once the client
/// has finished its request stream, `answer` reads the request, runs the handler and queues
/// the response, all within the tick that brought the request; the connection then sends
/// the status. For handlers that neither block nor wait.
struct LoopHandler: Sendable {
  /// Throws what fails the call; the connection sends OK when it returns.
  let answer: @Sendable (ServerStream, ServerContext) throws -> Void
  /// The same method as a task, for a call the loop cannot answer at once: the connection's
  /// ``SendBudget`` is spent, and the response must wait for room before it is serialised.
  let task: ServerHandler
}
