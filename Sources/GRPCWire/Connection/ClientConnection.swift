internal import CGRPCSystem
internal import CNGHTTP2
internal import Glibc
internal import Synchronization

/// One HTTP/2 connection to a gRPC server, owned by a single event loop.
///
/// Calls may be started from any task (``start(_:)`` hops to the loop); the socket, the nghttp2
/// session and the stream table are only touched on `loop`. Reads go into a 64 KiB buffer and
/// straight into `nghttp2_session_mem_recv`; all frames nghttp2 wants to send in one loop tick
/// go out in one write. Open calls fail with UNAVAILABLE (interrupted) when the connection is
/// lost; calls started before it is ready wait for it.
final class ClientConnection: EventHandler, TickEndHandler, @unchecked Sendable {
  // @unchecked Sendable: `acceptsNewCalls` is atomic; everything else is loop-only.

  let loop: EventLoop
  let target: String
  let settings: HTTP2Settings

  /// False once the connection is draining, failed or closed: the channel opens another.
  let acceptsNewCalls = Atomic<Bool>(true)

  private enum State {
    case resolving
    case connecting(addresses: [SocketAddress], index: Int, failures: [String])
    case ready
    case closed(RPCError)
  }

  private var state = State.resolving
  private var fd: Int32 = -1
  private var session: OpaquePointer?
  private var streams: [Int32: ClientStream] = [:]
  private var waiting: [ClientStream] = []
  private var output: [UInt8] = []
  private var outputOffset = 0
  private var flushScheduled = false
  private var writeInterest = false
  private var goingAway = false
  private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)

  init(loop: EventLoop, target: String, settings: HTTP2Settings) {
    self.loop = loop
    self.target = target
    self.settings = settings
  }

  deinit {
    readBuffer.deallocate()
    if let session { nghttp2_session_del(session) }
    if fd >= 0 { Glibc.close(fd) }
  }

  // MARK: Calls

  /// Starts `stream` on this connection, now if it is ready, else once it is.
  func start(_ stream: ClientStream) {
    loop.assertInLoop()
    switch state {
    case .resolving, .connecting:
      waiting.append(stream)
    case .ready:
      guard !goingAway else {
        stream.fail(RPCError(code: .unavailable, message: "the connection to \(target) is draining (GOAWAY)"), reset: false)
        return
      }
      submit(stream)
    case .closed(let error):
      stream.fail(error, reset: false)
    }
  }

  private func submit(_ stream: ClientStream) {
    // Cancelled or timed out while waiting for the connection: it never reaches the wire.
    guard stream.outcome == nil else { return }
    var provider = nghttp2_data_provider()
    provider.source.ptr = Unmanaged.passUnretained(stream).toOpaque()
    provider.read_callback = onDataSourceRead
    let id = HeaderBlock.withNameValues(stream.requestHeaders) { nva, count in
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
    scheduleFlush()
  }

  func resumeData(of stream: ClientStream) {
    loop.assertInLoop()
    guard let session, streams[stream.streamID] != nil else { return }
    nghttp2_session_resume_data(session, stream.streamID)
    scheduleFlush()
  }

  /// Acknowledges `count` received bytes: for the stream and the connection while the stream is
  /// open in nghttp2, else for the connection only.
  func consume(streamID: Int32, _ count: Int, streamOpen: Bool) {
    loop.assertInLoop()
    guard let session, count > 0 else { return }
    if !streamOpen || streams[streamID] == nil || nghttp2_session_consume(session, streamID, count) != 0 {
      nghttp2_session_consume_connection(session, count)
    }
    scheduleFlush()
  }

  func reset(streamID: Int32) {
    loop.assertInLoop()
    guard let session else { return }
    nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, HTTP2ErrorCode.cancel)
    scheduleFlush()
  }

  // MARK: Connecting

  /// Name resolution failed (it runs off the loop).
  func resolutionFailed(_ error: RPCError) {
    loop.assertInLoop()
    close(with: error)
  }

  /// Connects to the first of `addresses` that accepts.
  func connect(to addresses: [SocketAddress]) {
    loop.assertInLoop()
    guard case .resolving = state else { return }
    state = .connecting(addresses: addresses, index: 0, failures: [])
    attemptConnect()
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
    let socketFD = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard socketFD >= 0 else {
      failures.append("\(address): socket: \(errnoDescription(errno))")
      state = .connecting(addresses: addresses, index: index + 1, failures: failures)
      return attemptConnect()
    }
    _ = fleet_set_tcp_nodelay(socketFD)
    let result = address.withSockAddr { Glibc.connect(socketFD, $0, $1) }
    if result == 0 || errno == EINPROGRESS {
      fd = socketFD
      loop.register(fd, .write, self)
      writeInterest = true
      if result == 0 { connected() }
    } else {
      failures.append("\(address): \(errnoDescription(errno))")
      Glibc.close(socketFD)
      state = .connecting(addresses: addresses, index: index + 1, failures: failures)
      attemptConnect()
    }
  }

  private func connectFinished() {
    guard case .connecting(let addresses, let index, var failures) = state else { return }
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
    if error == 0 {
      connected()
      return
    }
    failures.append("\(addresses[index]): \(errnoDescription(error))")
    loop.unregister(fd)
    Glibc.close(fd)
    fd = -1
    state = .connecting(addresses: addresses, index: index + 1, failures: failures)
    attemptConnect()
  }

  private func connected() {
    session = HTTP2Settings.makeClientSession(userData: Unmanaged.passUnretained(self).toOpaque())
    settings.submit(to: session!)
    state = .ready
    loop.modify(fd, .read)
    writeInterest = false
    let pending = waiting
    waiting.removeAll()
    for stream in pending { submit(stream) }
    scheduleFlush()
  }

  // MARK: I/O

  func readable() {
    switch state {
    case .connecting:
      connectFinished()
      return
    case .resolving, .closed:
      return
    case .ready:
      break
    }
    // Read what is there, up to 1 MiB a tick, so one busy connection cannot starve the loop.
    for _ in 0..<16 {
      let count = read(fd, readBuffer.baseAddress, readBuffer.count)
      if count > 0 {
        let consumed = nghttp2_session_mem_recv(
          session, readBuffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count)
        if consumed < 0 {
          // nghttp2 has queued a GOAWAY describing the violation; send it, then give up.
          flush()
          close(with: .interrupted("the connection to \(target) failed: the server broke HTTP/2 (\(nghttp2Error(Int32(consumed))))"))
          return
        }
        if case .closed = state { return }
        if count < readBuffer.count { break }
      } else if count == 0 {
        close(with: .interrupted("the server at \(target) closed the connection"))
        return
      } else {
        if errno == EAGAIN || errno == EWOULDBLOCK { break }
        if errno == EINTR { continue }
        close(with: .interrupted("the connection to \(target) failed: \(errnoDescription(errno))"))
        return
      }
    }
    scheduleFlush()
  }

  func writable() {
    switch state {
    case .connecting: connectFinished()
    case .ready: flush()
    case .resolving, .closed: break
    }
  }

  /// Closes the connection now, failing its calls (the channel was closed).
  func shutDown() {
    loop.assertInLoop()
    // Frames queued this tick (a RST_STREAM for a just-cancelled call, say) still go out,
    // followed by a GOAWAY, before the socket closes.
    if let session { nghttp2_session_terminate_session(session, HTTP2ErrorCode.noError) }
    flush()
    close(with: RPCError(code: .unavailable, message: "the channel was closed"))
  }

  func loopClosing() {
    close(with: RPCError(code: .unavailable, message: "the event loop is shutting down"))
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

  /// Moves what nghttp2 wants to send into `output` and writes it: many frames, one syscall.
  private func flush() {
    guard case .ready = state, let session else { return }
    while true {
      if outputOffset == output.count {
        output.removeAll(keepingCapacity: output.capacity <= 4 << 20)
        outputOffset = 0
        while output.count < 1 << 20 {
          var chunk: UnsafePointer<UInt8>? = nil
          let length = nghttp2_session_mem_send(session, &chunk)
          if length < 0 {
            close(with: .interrupted("the connection to \(target) failed: \(nghttp2Error(Int32(length)))"))
            return
          }
          if length == 0 { break }
          output.append(contentsOf: UnsafeBufferPointer(start: chunk, count: length))
        }
        if output.isEmpty { break }
      }
      let written = output.withUnsafeBytes { raw in
        write(fd, raw.baseAddress! + outputOffset, raw.count - outputOffset)
      }
      if written > 0 {
        outputOffset += written
        continue
      }
      if written < 0 && errno == EINTR { continue }
      if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
        if !writeInterest {
          writeInterest = true
          loop.modify(fd, [.read, .write])
        }
        return
      }
      close(with: .interrupted("the connection to \(target) failed while writing: \(errnoDescription(errno))"))
      return
    }
    if writeInterest {
      writeInterest = false
      loop.modify(fd, .read)
    }
    if goingAway && streams.isEmpty {
      close(with: RPCError(code: .unavailable, message: "the connection to \(target) was closed after GOAWAY"))
    } else if nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 {
      close(with: .interrupted("the HTTP/2 session with \(target) ended"))
    }
  }

  /// Fails every call on this connection with `error` and releases the socket and session.
  private func close(with error: RPCError) {
    if case .closed = state { return }
    state = .closed(error)
    acceptsNewCalls.store(false, ordering: .relaxed)
    let open = streams
    streams.removeAll()
    for stream in open.values { stream.closed(http2ErrorCode: 0, lostConnection: error) }
    let pending = waiting
    waiting.removeAll()
    for stream in pending { stream.fail(error, reset: false) }
    if fd >= 0 {
      loop.unregister(fd)
      Glibc.close(fd)
      fd = -1
    }
    if let session {
      nghttp2_session_del(session)
      self.session = nil
    }
  }

  // MARK: From nghttp2's callbacks (inside mem_recv / mem_send)

  func stream(_ id: Int32) -> ClientStream? { streams[id] }

  func streamClosed(_ id: Int32, http2ErrorCode: UInt32) {
    streams.removeValue(forKey: id)?.closed(http2ErrorCode: http2ErrorCode)
  }

  func goAwayReceived(lastStreamID: Int32, errorCode: UInt32) {
    goingAway = true
    acceptsNewCalls.store(false, ordering: .relaxed)
  }
}

/// nghttp2's text for one of its error codes.
func nghttp2Error(_ code: Int32) -> String {
  String(cString: nghttp2_strerror(code))
}
