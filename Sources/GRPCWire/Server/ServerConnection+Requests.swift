internal import CNGHTTP2
internal import Logging

/// Requests as nghttp2 reported them (handed over by the session once mem_recv or mem_send
/// returned): streams begin, headers are checked and a handler started, bodies read, streams
/// closed.
extension ServerConnection {
  @discardableResult
  func beginStream(_ id: Int32) -> ServerStream {
    if let idleTimer {
      loop.cancelTimer(idleTimer)
      self.idleTimer = nil
    }
    let stream = ServerStream(loop: loop, id: id, outboundLimit: options.streamSendBuffer)
    stream.session = session
    session.add(stream)
    return stream
  }

  /// The open stream `id`, from the session's stream table (whose streams are all ours).
  func stream(_ id: Int32) -> ServerStream? {
    session.stream(id, as: ServerStream.self)
  }

  /// The open streams (the session's stream table), a list of them.
  var openStreams: [ServerStream] {
    session.streams(as: ServerStream.self)
  }

  func headersReceived(_ headers: ReceivedHeaders, fields: [HeaderField], stream: StreamCore?) {
    lastFrameAt = .now
    switch headers.kind {
    case .request:
      let stream = beginStream(headers.streamID)
      requestHeadersReceived(stream, fields: fields, endStream: headers.endStream)
    case .response, .trailers:
      // Request trailers: nothing in them matters to gRPC; the request stream is over.
      if headers.endStream, let stream {
        endRequests(unsafeDowncast(stream, to: ServerStream.self))
      }
    }
  }

  func goAwayReceived(lastStreamID: Int32, errorCode: UInt32, debugData: String) {
    lastFrameAt = .now
  }

  func frameReceived(_ frame: ReceivedFrame) {
    lastFrameAt = .now
    switch frame.type {
    case UInt8(NGHTTP2_SETTINGS.rawValue):
      if !frame.isAck { clientSettingsReceived() }
    case UInt8(NGHTTP2_PING.rawValue):
      if frame.isAck { pingOutstanding = false } else { pingReceived() }
    case UInt8(NGHTTP2_DATA.rawValue):
      guard let stream = stream(frame.streamID) else { return }
      if frame.endsStream {
        endRequests(stream)
      } else if frame.length < MessageFramer.prefixLength {
        tinyDataFrameReceived(stream)
      }
    default:
      break
    }
  }

  func dataReceived(streamID: Int32, _ bytes: UnsafeRawBufferPointer, stream: StreamCore?) {
    guard let stream = stream.map({ unsafeDowncast($0, to: ServerStream.self) }) else {
      // A stream no longer tracked: its bytes still count against the connection's window.
      return consume(streamID: streamID, bytes.count, streamOpen: false)
    }
    // Answered already (refused, or the handler is done): nothing will read what comes.
    guard case .accept(let encoding) = stream.machine.receiveData() else {
      return consume(streamID: stream.id, bytes.count, streamOpen: true)
    }
    if let error = stream.receivedData(bytes, encoding: encoding) { stream.fail(error) }
  }

  /// A DATA frame of fewer than 5 bytes that did not end the stream: past
  /// ``ServerOptions/maxTinyFramesPerStream`` of them on one stream, the connection ends with
  /// ENHANCE_YOUR_CALM.
  func tinyDataFrameReceived(_ stream: ServerStream) {
    stream.tinyFrames += 1
    guard stream.tinyFrames > options.maxTinyFramesPerStream, let nghttp2 = session.nghttp2 else { return }
    logger.notice(
      "too many tiny DATA frames: GOAWAY ENHANCE_YOUR_CALM",
      metadata: ["grpc.stream_id": "\(stream.id)", "grpc.frames": "\(stream.tinyFrames)"])
    // nghttp2 sends the GOAWAY and then wants neither to read nor to write; the flush then
    // closes. Out of memory even for that: close without it, once the events of this read
    // have all been handed over.
    if nghttp2_session_terminate_session(nghttp2, HTTP2ErrorCode.enhanceYourCalm) != 0 {
      closeSocketSoon()
    }
  }

  func clientSettingsReceived() {
    machine.settingsReceived()
    guard let handshakeTimer else { return }
    loop.cancelTimer(handshakeTimer)
    self.handshakeTimer = nil
  }

  func requestHeadersReceived(_ stream: ServerStream, fields: [HeaderField], endStream: Bool) {
    guard let server else { return }
    var method: ServerMethod? = nil
    let checked = stream.machine.receiveRequestHeaders(fields) { path in
      method = server.handler(for: path)
      return method != nil
    }
    guard case .start(let path, let head, let timeout) = checked, let method else {
      if case .refuse(let status, let httpStatus) = checked {
        // Not POST (405), not gRPC (415), or a grpc-timeout that does not parse (the only
        // INTERNAL refusal): malformed, not merely unknown to this server.
        if httpStatus != 200 || status.code == .internalError { malformedRequestRefused() }
        stream.respondEarly(status, httpStatus: httpStatus)
      }
      return
    }
    stream.acceptsGzip = head.acceptsGzip
    stream.restartInbound(maxReceiveSize: options.maxReceiveMessageSize)
    stream.maxSendMessageSize = options.maxSendMessageSize
    stream.maxRequestSize = options.maxReceiveMessageSize
    stream.sendBudget = sendBudget
    let context = ServerContext(
      path: path,
      requestMetadata: Metadata(receivedHeaders: fields.lazy.map { (name: $0.name, value: $0.value) }),
      timeout: timeout, peer: peer, maxSendMessageSize: options.maxSendMessageSize,
      session: LoopBound(session, on: loop))
    stream.context = context
    if let timeout {
      // The timer holds the stream until it is cancelled, when the call ends
      // (finishResponse, abort).
      stream.deadlineTimer = loop.scheduleTimer(at: .now.advanced(by: timeout), target: stream)
    }
    switch method {
    case .task(let handler):
      let executor: (any TaskExecutor)? = options.handlersRunOnEventLoop ? loop : nil
      stream.handlerTask = Task(executorPreference: executor) {
        await handler(stream, context)
      }
    case .onLoop(let handler):
      stream.loopHandler = handler
    }
    if endStream { endRequests(stream) }
  }

  /// Acknowledges `count` request bytes read (or dropped): the client may send as many more.
  func consume(streamID: Int32, _ count: Int, streamOpen: Bool) {
    session.acknowledge(
      count, streamID: streamID, streamOpen: streamOpen && session.stream(streamID) != nil)
  }

  /// The client finished its request stream: a call answered on the loop is answered once
  /// mem_recv has returned (``answerReadyCalls()``).
  func endRequests(_ stream: ServerStream) {
    if let error = stream.requestsEnded() { return stream.fail(error) }
    if stream.loopHandler != nil { readyOnLoop.append(stream) }
  }

  func streamClosed(_ id: Int32, errorCode: UInt32, stream: StreamCore?) {
    guard let stream = stream.map({ unsafeDowncast($0, to: ServerStream.self) }) else { return }
    stream.streamClosed = true
    if let interrupted = stream.machine.streamClosed(http2ErrorCode: errorCode) {
      // Closed before the call was answered: the client reset it (or the connection ended).
      stream.abort(interrupted)
    }
    stream.discardQueues()
    guard session.streams.isEmpty else { return }
    armIdleTimer()
    // At once, not through the loop's queue: a stream's close is handed over once nghttp2
    // has returned, and what is left of the session's batch after the connection ends its
    // session is dropped, not handed to it (HTTP2Session.deliver). The connection is held by
    // whoever is handing the batch over (the loop's read or write, or the end-of-tick flush).
    // A server shutting down closes once its final GOAWAY has been written, a draining
    // connection (shutting down drains too) once its own has.
    switch machine.lastCallEnded() {
    case .close:
      closeOnceWritten()
    case .closeIfDrained:
      closeIfDrained()
    case .idle:
      break
    }
  }
}
