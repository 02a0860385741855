internal import FleetSync
internal import Synchronization

/// A gRPC client for one target (`host:port`), over plaintext HTTP/2.
///
/// Calls of all four kinds may be made from any task, concurrently; they share one HTTP/2
/// connection, opened on the first call and replaced when it is lost (a call that was running
/// on a lost connection fails with UNAVAILABLE, `isInterrupted`). Name resolution runs off the
/// event loop. Every failure a call reports is an ``RPCError``.
public final class GRPCChannel: Sendable {
  /// The host and port calls go to.
  public let host: String
  public let port: Int
  public let options: ChannelOptions
  let loop: EventLoop
  private let current = PosixMutex<ClientConnection?>(nil)
  private let closed = Atomic<Bool>(false)
  private let baseHeaders: [HeaderField]

  /// The version sent in `user-agent`.
  public static let version = "0.1.0"

  /// A channel to `host:port`; nothing is connected until the first call.
  public init(
    host: String, port: Int, options: ChannelOptions = ChannelOptions(),
    eventLoop: EventLoop = .shared
  ) {
    self.host = host
    self.port = port
    self.options = options
    self.loop = eventLoop
    let authority = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
    let userAgent = [options.userAgentPrefix, "grpc-swift-fleetconsumer/\(Self.version)"]
      .compactMap { $0 }.joined(separator: " ")
    baseHeaders = [
      HeaderField(name: ":method", value: "POST"),
      HeaderField(name: ":scheme", value: "http"),
      HeaderField(name: ":authority", value: authority),
      HeaderField(name: "content-type", value: "application/grpc"),
      HeaderField(name: "te", value: "trailers"),
      HeaderField(name: "user-agent", value: userAgent),
      HeaderField(name: "grpc-accept-encoding", value: "identity,gzip"),
    ]
  }

  /// Closes the channel: new calls fail with UNAVAILABLE and calls still running fail with
  /// UNAVAILABLE. (A graceful drain arrives with connection management.)
  public func close() {
    closed.store(true, ordering: .relaxed)
    guard let connection = current.withLock({ $0.take() }) else { return }
    loop.execute { connection.shutDown() }
  }

  // MARK: Making calls

  /// The connection for a new call: the current one unless it stopped taking calls.
  private func connection() -> ClientConnection {
    current.withLock { current in
      if let existing = current, existing.acceptsNewCalls.load(ordering: .relaxed) {
        return existing
      }
      let fresh = ClientConnection(
        loop: loop, target: "\(host):\(port)",
        settings: HTTP2Settings(
          streamWindow: Int32(clamping: options.streamWindow),
          connectionWindow: Int32(clamping: options.connectionWindow)))
      current = fresh
      resolveAndConnect(fresh)
      return fresh
    }
  }

  private func resolveAndConnect(_ connection: ClientConnection) {
    let (host, port, loop) = (self.host, self.port, self.loop)
    if let numeric = SocketAddress(numericHost: host, port: port) {
      loop.execute { connection.connect(to: [numeric]) }
      return
    }
    // getaddrinfo blocks: keep it off the loop thread.
    Task.detached {
      let resolved = SocketAddress.resolve(host: host, port: port)
      loop.execute {
        switch resolved {
        case .success(let addresses): connection.connect(to: addresses)
        case .failure(let error): connection.resolutionFailed(error)
        }
      }
    }
  }

  /// A stream for a call to `path`, its request headers built and checked.
  func makeStream(
    path: String, options: CallOptions, firstRequest: [UInt8], requestsFinished: Bool
  ) throws(RPCError) -> ClientStream {
    guard !closed.load(ordering: .relaxed) else {
      throw RPCError(code: .unavailable, message: "the channel to \(host):\(port) is closed")
    }
    do {
      try options.metadata.validate()
    } catch {
      throw RPCError.invalidMetadata(error)
    }
    var headers = baseHeaders
    headers.insert(HeaderField(name: ":path", value: path), at: 2)
    if let timeout = options.timeout {
      headers.append(HeaderField(name: "grpc-timeout", value: GRPCTimeout.encode(timeout)))
    }
    if let compression = options.compression {
      headers.append(HeaderField(name: "grpc-encoding", value: compression.rawValue))
    }
    for (name, value) in options.metadata.headerFields() {
      headers.append(HeaderField(name: name, value: value))
    }
    return ClientStream(
      loop: loop, requestHeaders: headers, initialRequest: firstRequest,
      finished: requestsFinished,
      maxReceiveSize: options.maxReceiveMessageSize ?? self.options.maxReceiveMessageSize,
      timeout: options.timeout)
  }

  /// Starts `stream`, runs `body` with cancellation wired to a stream reset, and makes sure the
  /// stream is over (reset with CANCEL) when `body` leaves early.
  func run<R>(_ stream: ClientStream, _ body: () async throws -> R) async throws -> R {
    if Task.isCancelled {
      throw RPCError(code: .cancelled, message: "the call's task was cancelled before it started")
    }
    if let timeout = stream.timeout, timeout <= .zero {
      throw RPCError(code: .deadlineExceeded, message: "the call's deadline had passed before it started")
    }
    stream.retry = { [weak self] stream in
      guard let self else {
        stream.fail(RPCError(code: .unavailable, message: "the channel is gone"), reset: false)
        return
      }
      let connection = self.connection()
      connection.start(stream)
    }
    let connection = connection()
    loop.execute { connection.start(stream) }
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

extension Optional {
  fileprivate mutating func take() -> Wrapped? {
    defer { self = nil }
    return self
  }
}
