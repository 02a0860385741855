internal import CNGHTTP2

/// Received DATA handed back to the peer's flow-control windows, for both roles' connections
/// (both take manual receive flow control: bytes are acknowledged as their reader takes them).
enum ReceiveCredit {
  /// Acknowledges `count` received bytes: for the stream and the connection while the stream
  /// is open in nghttp2 (`streamOpen`), else — or when nghttp2 no longer knows the stream —
  /// for the connection only, which the bytes counted against all the same.
  static func acknowledge(
    _ count: Int, streamID: Int32, streamOpen: Bool, in session: OpaquePointer
  ) {
    if !streamOpen || nghttp2_session_consume(session, streamID, count) != 0 {
      nghttp2_session_consume_connection(session, count)
    }
  }
}
