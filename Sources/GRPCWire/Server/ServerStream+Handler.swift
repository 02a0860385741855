internal import FleetSync

/// The handler's side of a call (its task, or the loop for an on-loop handler): reading
/// requests, as the handler asks for them, and queueing responses and the status.
extension ServerStream {
  /// The next request message (decompressed), nil when the client finished its stream.
  func nextRequest() async throws -> [UInt8]? {
    // A request already here (a unary call's, always) is taken without suspending.
    let frame: MessageDeframer.Frame?
    if let ready = shared.withLock({ Self.take(&$0) }) {
      frame = try ready.get()
    } else {
      frame = try await withCheckedThrowingContinuation {
        (c: CheckedContinuation<MessageDeframer.Frame?, any Error>) in
        let now = shared.withLock { s -> Result<MessageDeframer.Frame?, any Error>? in
          let now = Self.take(&s)
          if now == nil { s.readerWaiting = c }
          return now
        }
        if let now { c.resume(with: now) }
      }
    }
    return try payload(of: frame)
  }

  /// ``nextRequest()`` for a handler on the loop, called once the client has finished its
  /// request stream, when every request is here and nothing is waited for.
  func takeRequest() throws -> [UInt8]? {
    loop.assertInLoop()
    guard let ready = shared.withLock({ Self.take(&$0) }) else {
      throw RPCError(code: .internalError, message: "a request was read before the requests ended")
    }
    return try payload(of: ready.get())
  }

  /// A request taken from the queue, acknowledged to the client and decompressed.
  func payload(of frame: MessageDeframer.Frame?) throws -> [UInt8]? {
    returnReadCredit()
    guard let frame else { return nil }
    context?.recordRequest(compressed: frame.compressed)
    guard frame.compressed else { return frame.payload }
    do {
      return try Gzip.decompress(frame.payload, limit: maxRequestSize)
    } catch {
      // As for an uncompressed request over the limit, and as the client treats responses.
      switch error {
      case .tooLarge(let limit):
        throw RPCError(
          code: .resourceExhausted,
          message: "a compressed request inflates past the server's limit of \(limit) bytes")
      case .corrupt(let reason):
        throw RPCError(code: .internalError, message: "a gzip request message is corrupt: \(reason)")
      }
    }
  }

  /// The next request, the end of the requests or the call's abort; nil: the reader must wait.
  static func take(_ s: inout Shared) -> Result<MessageDeframer.Frame?, any Error>? {
    if let aborted = s.aborted { return .failure(aborted) }
    if s.requestsHead < s.requests.count {
      let request = s.requests[s.requestsHead]
      let frame = request.frame
      s.creditToReturn += request.owed
      s.requests[s.requestsHead] = QueuedRequest(frame: .init(compressed: false, payload: []), owed: 0)
      s.requestsHead += 1
      if s.requestsHead == s.requests.count {
        s.requests.removeAll(keepingCapacity: true)
        s.requestsHead = 0
      }
      return .success(frame)
    }
    if s.requestsFinished { return .success(nil) }
    return nil
  }

  /// Acknowledges what the handler has read, from the loop: at once when on it, else in one
  /// hop for all the reads until the hop runs.
  func returnReadCredit() {
    let schedule = shared.withLock { s -> Bool in
      guard s.creditToReturn > 0, !s.creditScheduled else { return false }
      s.creditScheduled = true
      return true
    }
    guard schedule else { return }
    if loop.inEventLoop {
      acknowledgeReadCredit()
    } else {
      loop.execute { self.acknowledgeReadCredit() }
    }
  }

  func acknowledgeReadCredit() {
    loop.assertInLoop()
    let credit = shared.withLock { s -> Int in
      defer {
        s.creditToReturn = 0
        s.creditScheduled = false
      }
      return s.creditToReturn
    }
    connection?.consume(streamID: id, credit, streamOpen: !machine.isClosed)
  }

  /// Queues one response message, framed straight into the outbound queue; suspends only while
  /// too much waits unsent: ``ServerOptions/streamSendBuffer`` (the client's window is shut),
  /// or, for a handler running on the loop's own thread, ``loopWriteLimit``. Before the
  /// message is even serialised, it waits while the connection's ``SendBudget`` is spent.
  ///
  /// On the loop the writer gives way early: a handler that writes in a loop would otherwise
  /// keep the thread until 1 MiB is queued, and the socket — of this stream and of every other
  /// connection of the loop — would wait that long. Suspended, it resumes once the loop's
  /// flush has taken the queue below the limit, within the same tick when the socket keeps up.
  func writeResponse(compress: Bool, serialize: (inout [UInt8]) throws -> Void) async throws {
    if let sendBudget {
      try await sendBudget.waitForRoom(stream: id) { shared.withLock { $0.aborted } }
    }
    let limit = loop.inEventLoop ? min(Self.loopWriteLimit, outboundLimit) : outboundLimit
    let (schedule, full) = try queueResponse(
      compress: compress, limit: limit, announce: true, serialize: serialize)
    if schedule { loop.execute { self.responseBytesQueued() } }
    // Under the limit the write is done: no suspension.
    guard full else { return }
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
      let now = shared.withLock { s -> Result<Void, any Error>? in
        if let aborted = s.aborted { return .failure(aborted) }
        if s.outbound.count - s.outboundOffset <= limit { return .success(()) }
        s.writerWaiting = c
        s.writerLimit = limit
        return nil
      }
      if let now { c.resume(with: now) }
    }
  }

  /// The one response of a unary call whose handler runs on the loop, queued whole: the
  /// connection has checked its ``SendBudget`` has room, and nothing waits for the queue to
  /// drain (the status follows the message at once). The connection starts the response.
  func queueResponseOnLoop(compress: Bool, serialize: (inout [UInt8]) throws -> Void) throws {
    loop.assertInLoop()
    _ = try queueResponse(compress: compress, limit: .max, announce: false, serialize: serialize)
  }

  /// Frames one response message into the outbound queue and counts it against the
  /// connection's budget: whether the loop must be told (no hop is queued yet) and whether
  /// more than `limit` now waits unsent. Without `announce` (a caller on the loop that starts
  /// the response itself) no hop is claimed.
  func queueResponse(
    compress: Bool, limit: Int, announce: Bool, serialize: (inout [UInt8]) throws -> Void
  ) throws -> (schedule: Bool, full: Bool) {
    var queuedBytes = 0
    var accounted = false
    // A writer that fails before it queues still lets the next waiting one in.
    defer { if !accounted { sendBudget?.queued(0) } }
    let gzip = compress && (connection?.compressionAllowed(for: self) ?? false)
    let (schedule, full): (Bool, Bool)
    if gzip {
      // Compressed: framed apart, since the prefix needs the compressed length.
      var bytes: [UInt8] = []
      try MessageFramer.append(to: &bytes, compress: true, serialize: serialize)
      try checkSendSize(bytes.count - MessageFramer.prefixLength)
      (schedule, full) = try shared.withLock { s throws(RPCError) -> (Bool, Bool) in
        if let aborted = s.aborted { throw aborted }
        s.outbound.append(contentsOf: bytes)
        queuedBytes = bytes.count
        defer { if announce { s.resumeScheduled = true } }
        return (announce && !s.resumeScheduled, s.outbound.count - s.outboundOffset > limit)
      }
    } else {
      // The message is serialised into the queue under the lock: no buffer of its own, no
      // copy. nghttp2's data provider waits for the lock at most that long.
      (schedule, full) = try shared.withLock { s throws -> (Bool, Bool) in
        if let aborted = s.aborted { throw aborted }
        let start = s.outbound.count
        do {
          try MessageFramer.append(to: &s.outbound, compress: false, serialize: serialize)
          try checkSendSize(s.outbound.count - start - MessageFramer.prefixLength)
        } catch {
          s.outbound.removeSubrange(start...)
          throw error
        }
        queuedBytes = s.outbound.count - start
        defer { if announce { s.resumeScheduled = true } }
        return (announce && !s.resumeScheduled, s.outbound.count - s.outboundOffset > limit)
      }
    }
    // Counted before this writer waits for its own stream: the connection's other writers
    // must see these bytes now.
    sendBudget?.queued(queuedBytes)
    accounted = true
    return (schedule, full)
  }

  /// Throws RESOURCE_EXHAUSTED for a message (as framed: compressed, when it is) above the
  /// server's ``ServerOptions/maxSendMessageSize``.
  func checkSendSize(_ length: Int) throws(RPCError) {
    guard length > maxSendMessageSize else { return }
    throw RPCError(
      code: .resourceExhausted,
      message: "the response message of \(length) bytes is larger than the server's limit of \(maxSendMessageSize) bytes")
  }

  /// The handler is done: `status` and `trailers` go out after the queued responses.
  func finish(_ status: Status, trailers: Metadata) {
    if setStatus(status, trailers) { loop.execute { self.connection?.finishResponse(of: self) } }
  }

  /// ``finish(_:trailers:)`` for a handler on the loop: the connection then finishes the
  /// response itself, with no hop. False when the call had already ended.
  func setStatus(_ status: Status, _ trailers: Metadata) -> Bool {
    shared.withLock { s -> Bool in
      guard s.status == nil, s.aborted == nil else { return false }
      s.status = (status, trailers)
      return true
    }
  }
}
