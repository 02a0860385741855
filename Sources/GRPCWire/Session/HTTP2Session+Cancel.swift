internal import CNGHTTP2

/// A stream of ours reset with CANCEL, for a stream that holds its session rather than its
/// connection (a client's call cancelled, or past its deadline).
extension HTTP2Session {
  /// Queues RST_STREAM(CANCEL) for stream `id`, sent with the end-of-tick flush. The role
  /// hears first of a deadline that passed (``HTTP2SessionRole/callTimedOut()``: a client
  /// probes a quiet connection), and of a reset nghttp2 could not queue
  /// (``HTTP2SessionRole/resetNotQueued(_:)``). Nothing once the session has ended. Loop only,
  /// outside nghttp2's callbacks.
  func cancel(_ id: Int32, deadlinePassed: Bool) {
    loop.checkInLoop()
    loop.checkOutsideCallbacks()
    guard let nghttp2, let role else { return }
    if deadlinePassed { role.callTimedOut() }
    let flags = UInt8(NGHTTP2_FLAG_NONE.rawValue)
    guard nghttp2_submit_rst_stream(nghttp2, flags, id, HTTP2ErrorCode.cancel) == 0 else {
      return role.resetNotQueued(id)
    }
    scheduleFlush()
  }
}
