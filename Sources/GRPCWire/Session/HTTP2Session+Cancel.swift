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
    guard nghttp2 != nil, let role else { return }
    if deadlinePassed { role.callTimedOut() }
    if reset(id, code: HTTP2ErrorCode.cancel) { scheduleFlush() }
  }

  /// Queues RST_STREAM with `code` for stream `id`; when nghttp2 cannot (out of memory), the
  /// role hears of it (``HTTP2SessionRole/resetNotQueued(_:)``: the connection goes) and it
  /// returns false. Nothing once the session has ended.
  @discardableResult
  func reset(_ id: Int32, code: UInt32) -> Bool {
    guard let nghttp2 else { return false }
    let flags = UInt8(NGHTTP2_FLAG_NONE.rawValue)
    guard nghttp2_submit_rst_stream(nghttp2, flags, id, code) == 0 else {
      role?.resetNotQueued(id)
      return false
    }
    return true
  }
}
