internal import CNGHTTP2
internal import Logging

/// What nghttp2 reports (inside mem_recv): response headers and data for the streams, stream
/// closes, the server's SETTINGS, PING acknowledgements and GOAWAY.
extension ClientConnection {
  /// The open stream `id`. nghttp2 calls back a dozen times per call (each header field,
  /// each DATA chunk), nearly always for the stream of the call before: that one is kept at
  /// hand rather than hashed for again.
  func stream(_ id: Int32) -> ClientStream? {
    if let last = lastLookedUp, last.streamID == id { return last }
    let found = streams[id]
    if found != nil { lastLookedUp = found }
    return found
  }

  func headersBegin(_ frame: UnsafePointer<nghttp2_frame>) {}

  func keepsHeaderFields(of frame: UnsafePointer<nghttp2_frame>) -> Bool {
    stream(frame.pointee.hd.stream_id) != nil
  }

  func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) {
    let hd = frame.pointee.hd
    switch hd.type {
    case UInt8(NGHTTP2_HEADERS.rawValue):
      let endStream = hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
      if let session { stream(hd.stream_id)?.receivedHeaders(session.headerBlock, endStream: endStream) }
    case UInt8(NGHTTP2_GOAWAY.rawValue):
      let goAway = frame.pointee.goaway
      let debugData =
        goAway.opaque_data.map {
          String(decoding: UnsafeBufferPointer(start: $0, count: goAway.opaque_data_len), as: UTF8.self)
        } ?? ""
      goAwayReceived(
        lastStreamID: goAway.last_stream_id, errorCode: goAway.error_code, debugData: debugData)
    case UInt8(NGHTTP2_SETTINGS.rawValue):
      if hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 { settingsReceived() }
    case UInt8(NGHTTP2_PING.rawValue):
      if hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0 { pingAcknowledged() }
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
