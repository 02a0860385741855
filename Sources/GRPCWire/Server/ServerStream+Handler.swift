internal import FleetSync

/// The handler's side of a call (its task, or the loop for an on-loop handler): reading
/// requests, as the handler asks for them, and queueing responses and the status.
extension ServerStream {
  /// The next request message (decompressed), nil when the client finished its stream.
  func nextRequest() async throws -> [UInt8]? {
    // A request already here (a unary call's, always) is taken without suspending.
    let request: QueuedRequest?
    if let ready = take() {
      request = try ready.get()
    } else {
      request = try await withCheckedThrowingContinuation {
        (c: CheckedContinuation<QueuedRequest?, any Error>) in
        let (now, returnCredit) = withShared { s in
          let taken = take(&s)
          if taken.result == nil { mailbox.readerWaiting = c }
          return taken
        }
        if returnCredit { returnReadCredit() }
        if let now { c.resume(with: now) }
      }
    }
    return try payload(of: request?.frame)
  }

  /// ``nextRequest()`` for a handler on the loop, called once the client has finished its
  /// request stream, when every request is here and nothing is waited for.
  func takeRequest() throws -> [UInt8]? {
    loop.checkInLoop()
    guard let ready = take() else {
      throw RPCError(code: .internalError, message: "a request was read before the requests ended")
    }
    return try payload(of: ready.get()?.frame)
  }

  /// The next request, if there is one, and its read credit handed back to the loop.
  private func take() -> Result<QueuedRequest?, any Error>? {
    let (result, returnCredit) = withShared { take(&$0) }
    if returnCredit { returnReadCredit() }
    return result
  }

  /// A request taken from the queue, decompressed.
  func payload(of frame: MessageDeframer.Frame?) throws -> [UInt8]? {
    guard let frame else { return nil }
    context?.recordRequest(compressed: frame.compressed)
    guard frame.compressed else { return frame.payload }
    return try Gzip.inflateMessage(
      frame.payload, limit: maxRequestSize, what: "request", limitOwner: "the server's limit")
  }

  /// The next request, the end of the requests or the call's abort (nil: the reader must
  /// wait), and whether read credit is now due back to the loop.
  func take(_ s: inout Shared) -> (result: Result<QueuedRequest?, any Error>?, returnCredit: Bool) {
    if let aborted = s.aborted { return (.failure(aborted), false) }
    if let (request, returnCredit) = mailbox.takeMessage() {
      return (.success(request), returnCredit)
    }
    if s.requestsFinished { return (.success(nil), false) }
    return (nil, false)
  }

  /// Acknowledges what the handler has read, from the loop: at once when on it, else in one
  /// hop for all the reads until the hop runs (the mailbox claimed it).
  func returnReadCredit() {
    if loop.inEventLoop {
      acknowledgeReadCredit()
    } else {
      loop.execute { self.acknowledgeReadCredit() }
    }
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
      try await sendBudget.waitForRoom(stream: id) { withShared { $0.aborted } }
    }
    let limit = loop.inEventLoop ? min(Self.loopWriteLimit, outboundLimit) : outboundLimit
    let (schedule, full) = try queueResponse(
      compress: compress, limit: limit, announce: true, serialize: serialize)
    if schedule { loop.execute { self.responseBytesQueued() } }
    // Under the limit the write is done: no suspension.
    guard full else { return }
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
      let now = withShared { s -> Result<Void, any Error>? in
        if let aborted = s.aborted { return .failure(aborted) }
        return mailbox.wait(writer: c, limit: limit) ? nil : .success(())
      }
      if let now { c.resume(with: now) }
    }
  }

  /// The one response of a unary call whose handler runs on the loop, queued whole: the
  /// connection has checked its ``SendBudget`` has room, and nothing waits for the queue to
  /// drain (the status follows the message at once). The caller starts the response.
  func queueResponseOnLoop(compress: Bool, serialize: (inout [UInt8]) throws -> Void) throws {
    loop.checkInLoop()
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
    let gzip = compress && compressionAllowed
    let (schedule, full): (Bool, Bool)
    if gzip {
      // Compressed: framed apart, since the prefix needs the compressed length.
      var bytes: [UInt8] = []
      try MessageFramer.append(to: &bytes, compress: true, serialize: serialize)
      try checkSendSize(bytes.count - MessageFramer.prefixLength)
      (schedule, full) = try withShared { s throws(RPCError) -> (Bool, Bool) in
        if let aborted = s.aborted { throw aborted }
        let written = mailbox.write(announce: announce) { $0.append(contentsOf: bytes) }
        queuedBytes = written.count
        return (written.tellLoop, mailbox.unsentCount > limit)
      }
    } else {
      // The message is serialised into the queue under the lock: no buffer of its own, no
      // copy. nghttp2's data provider waits for the lock at most that long.
      (schedule, full) = try withShared { s throws -> (Bool, Bool) in
        if let aborted = s.aborted { throw aborted }
        let written = try mailbox.write(announce: announce) { outbound throws in
          let start = outbound.count
          try MessageFramer.append(to: &outbound, compress: false, serialize: serialize)
          try checkSendSize(outbound.count - start - MessageFramer.prefixLength)
        }
        queuedBytes = written.count
        return (written.tellLoop, mailbox.unsentCount > limit)
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
    if setStatus(status, trailers) { loop.execute { self.finishResponse() } }
  }

  /// ``finish(_:trailers:)`` for a handler on the loop: its caller then finishes the response
  /// (``finishResponse()``), with no hop. False when the call had already ended.
  func setStatus(_ status: Status, _ trailers: Metadata) -> Bool {
    withShared { s -> Bool in
      guard s.status == nil, s.aborted == nil else { return false }
      s.status = (status, trailers)
      return true
    }
  }
}
