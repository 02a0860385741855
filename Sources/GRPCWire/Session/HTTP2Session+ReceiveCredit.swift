internal import CNGHTTP2

/// Received DATA handed back to the peer's flow-control windows, for both roles (both take
/// manual receive flow control, `NGHTTP2_OPT_NO_AUTO_WINDOW_UPDATE`: bytes are acknowledged
/// as their reader takes them, and the WINDOW_UPDATEs go out with the end-of-tick flush).
extension HTTP2Session {
  /// Acknowledges `count` received bytes of stream `streamID`: for the stream and the
  /// connection while the stream is open (`streamOpen`: in nghttp2 and in the role's stream
  /// table), else — or when nghttp2 no longer knows the stream — for the connection only,
  /// which the bytes counted against all the same.
  func acknowledge(_ count: Int, streamID: Int32, streamOpen: Bool) {
    loop.checkInLoop()
    guard let nghttp2, count > 0 else { return }
    if !streamOpen || nghttp2_session_consume(nghttp2, streamID, count) != 0 {
      nghttp2_session_consume_connection(nghttp2, count)
    }
    scheduleFlush()
  }
}
