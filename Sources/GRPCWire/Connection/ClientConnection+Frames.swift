internal import CNGHTTP2
internal import Logging

/// What nghttp2 reported (handed over by the session once mem_recv or mem_send returned):
/// response headers and data for the streams, stream closes, the server's SETTINGS, PING
/// acknowledgements and GOAWAY.
extension ClientConnection {
  /// The open stream `id`. The session hands over several events per call (headers, each
  /// DATA chunk, trailers, the close), nearly always for the stream of the call before: that
  /// one is kept at hand rather than hashed for again.
  func stream(_ id: Int32) -> ClientStream? {
    if let last = lastLookedUp, last.streamID == id { return last }
    let found = streams[id]
    if found != nil { lastLookedUp = found }
    return found
  }

  func headersReceived(_ headers: ReceivedHeaders, fields: [HeaderField]) {
    stream(headers.streamID)?.receivedHeaders(fields, endStream: headers.endStream)
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

  func dataReceived(streamID: Int32, _ bytes: UnsafeRawBufferPointer) {
    if let stream = stream(streamID) {
      stream.receivedData(bytes)
    } else {
      // A stream we no longer track: its bytes still count against the connection window.
      consume(streamID: streamID, bytes.count, streamOpen: false)
    }
  }

  func streamClosed(_ id: Int32, errorCode: UInt32) {
    if lastLookedUp?.streamID == id { lastLookedUp = nil }
    streams.removeValue(forKey: id)?.closed(http2ErrorCode: errorCode)
    pool?.callEnded(on: self)
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
