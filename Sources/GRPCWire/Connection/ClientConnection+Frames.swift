internal import CNGHTTP2
internal import Logging

/// What nghttp2 reported (handed over by the session once mem_recv or mem_send returned):
/// response headers and data for the streams, stream closes, the server's SETTINGS, PING
/// acknowledgements and GOAWAY.
extension ClientConnection {
  /// The open stream `id`, from the session's stream table (whose streams are all ours).
  func stream(_ id: Int32) -> ClientStream? {
    session?.stream(id, as: ClientStream.self)
  }

  /// The open streams (the session's stream table), a list of them.
  var openStreams: [ClientStream] {
    session?.streams(as: ClientStream.self) ?? []
  }

  /// How many streams are open.
  var openStreamCount: Int { session?.streams.count ?? 0 }

  func headersReceived(_ headers: ReceivedHeaders, fields: [HeaderField], stream: StreamCore?) {
    guard let stream else { return }
    unsafeDowncast(stream, to: ClientStream.self)
      .receivedHeaders(fields, endStream: headers.endStream)
  }

  func frameReceived(_ frame: ReceivedFrame) {
    switch frame.type {
    case UInt8(NGHTTP2_SETTINGS.rawValue):
      if !frame.isAck { settingsReceived() }
    case UInt8(NGHTTP2_PING.rawValue):
      if frame.isAck { pingAcknowledged() }
    default:
      break
    }
  }

  func dataReceived(streamID: Int32, _ bytes: UnsafeRawBufferPointer, stream: StreamCore?) {
    if let stream {
      unsafeDowncast(stream, to: ClientStream.self).receivedData(bytes)
    } else {
      // A stream we no longer track: its bytes still count against the connection window.
      session?.acknowledge(bytes.count, streamID: streamID, streamOpen: false)
    }
  }

  func streamClosed(_ id: Int32, errorCode: UInt32, stream: StreamCore?) {
    if let stream = stream.map({ unsafeDowncast($0, to: ClientStream.self) }),
      case .retry(let number, let delay) = stream.closed(http2ErrorCode: errorCode)
    {
      retry(stream, from: id, number: number, after: delay)
    }
    pool?.callEnded(on: self)
  }

  /// Hands a stream the server refused unprocessed, which has readied itself to be sent again
  /// whole (``ClientStream/AfterClose``), to the pool; at once, since the close is handed over
  /// outside nghttp2's callbacks and the retry may submit to a session (this one's too).
  private func retry(_ stream: ClientStream, from id: Int32, number: Int, after delay: Duration?) {
    logger.debug(
      "call retried transparently: the server did not process it",
      metadata: [
        "grpc.path": "\(stream.headerPrefix.path)", "grpc.stream_id": "\(id)",
        "grpc.retry": "\(number)",
      ])
    guard let pool else {
      // Only a closed connection has no pool, and it hands over no stream's close.
      stream.fail(.interrupted("the connection to \(target) closed"), reset: false)
      return
    }
    guard let delay else { return pool.start(stream) }
    // Refused again: the server is still at its limit. grpcio's overload protection, on by
    // default, counts a stream until its call object is freed, well after its trailers; an
    // immediate resubmission is refused again as long as that takes, and eight of them fail
    // the call within milliseconds. Each further retry waits twice as long (the call's
    // deadline still holds; a call that ends meanwhile is not started again).
    pool.start(stream, after: delay)
  }

  func headersRejected(streamID: Int32, reason: String) {
    // nghttp2 has queued RST_STREAM PROTOCOL_ERROR: the call fails now, saying what was wrong,
    // rather than at the stream's close, which would read as a reset by the server.
    stream(streamID)?.fail(
      RPCError(
        code: .internalError,
        message: "the server sent a header block HTTP/2 forbids (\(reason)); "
          + "the stream was reset with PROTOCOL_ERROR"),
      reset: false)
  }

  func goAwayReceived(lastStreamID: Int32, errorCode: UInt32, debugData: String) {
    guard machine.goAwayReceived() else { return }
    logger.info(
      "GOAWAY received",
      metadata: [
        "grpc.http2_error": "\(errorCode)", "grpc.last_stream_id": "\(lastStreamID)",
        "grpc.debug_data": "\(debugData.prefix(256))",
      ])
    // gRPC servers send ENHANCE_YOUR_CALM "too_many_pings" when we ping too often.
    let tooManyPings = errorCode == 0xB && debugData.contains("too_many_pings")
    pool?.connectionDraining(self, tooManyPings: tooManyPings)
    scheduleFlush()
  }
}
