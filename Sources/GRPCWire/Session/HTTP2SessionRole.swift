internal import CNGHTTP2

/// What a connection's role (``ClientConnection`` or ``ServerConnection``) makes of the
/// events of its ``HTTP2Session``. nghttp2's callbacks only record; the session hands the
/// events over once `nghttp2_session_mem_recv` or `mem_send` has returned, in the order they
/// happened, so the role may resume continuations, cancel handlers, submit frames and reset
/// streams (``EventLoop/checkOutsideCallbacks()``). The glitch limiter's two hooks are the
/// exception: they only count, inside the callbacks.
protocol HTTP2SessionRole: EventHandler {
  /// A whole header block arrived: `fields` (empty unless the session keeps blocks of this
  /// kind: ``HTTP2Session/keepsFields(of:)``), valid until the call returns. `stream` is its
  /// open stream from the session's table, of the role's type; nil for a request's block
  /// (the role begins its stream) or a stream no longer open.
  func headersReceived(_ headers: ReceivedHeaders, fields: [HeaderField], stream: StreamCore?)
  /// A whole frame other than HEADERS and GOAWAY arrived (a client is told of SETTINGS and
  /// PING only: ``HTTP2Session/recordsFrame(ofType:)``).
  func frameReceived(_ frame: ReceivedFrame)
  /// The peer sent GOAWAY.
  func goAwayReceived(lastStreamID: Int32, errorCode: UInt32, debugData: String)
  /// Body bytes of stream `streamID` arrived (valid until the call returns); `stream` is
  /// that stream from the session's table, nil if it is no longer open.
  func dataReceived(streamID: Int32, _ bytes: UnsafeRawBufferPointer, stream: StreamCore?)
  /// nghttp2 is done with a stream (ended both ways, or reset): `stream`, already taken out
  /// of the session's table, or nil if it was not in it.
  func streamClosed(_ streamID: Int32, errorCode: UInt32, stream: StreamCore?)
  /// nghttp2 rejected a header block of a stream (`reason`: its words) and has queued
  /// RST_STREAM PROTOCOL_ERROR; the stream's close follows once the reset is sent.
  func headersRejected(streamID: Int32, reason: String)
  /// A frame's header arrived (server role only: the glitch limiter's view of every frame,
  /// unknown types included). Inside nghttp2's callback: it only counts.
  func frameBegins(_ header: nghttp2_frame_hd)
  /// nghttp2 sent RST_STREAM with `errorCode` (server role only). Inside nghttp2's callback:
  /// it only counts.
  func resetSent(errorCode: UInt32)
  /// The most bytes read at once, below the loop's budget (server role: few for a client
  /// whose glitches are being limited, so that little of what it sends is processed past
  /// the limit, and the loop's other connections get their turn between its reads).
  var readSlice: Int { get }
  /// What one read brought went through nghttp2 and its events through the role; false
  /// stops reading, because the connection is closed.
  func readProcessed() -> Bool
  /// The end-of-tick flush the session scheduled: write, and act on how it went.
  func flush()
  /// A stream of ours is being reset as its call's deadline passed
  /// (``HTTP2Session/cancel(_:deadlinePassed:)``), before its RST_STREAM is queued.
  func callTimedOut()
  /// nghttp2 could not queue the RST_STREAM of stream `id` (out of memory): the stream cannot
  /// be reset alone.
  func resetNotQueued(_ id: Int32)
  /// A response with a body was submitted (server role:
  /// ``HTTP2Session/submitResponse(_:_:body:)``).
  func responseStarted()
  /// Close the connection at once, without GOAWAY (server role, fault injection:
  /// ``HTTP2Session/dropConnection()``).
  func drop()
  /// Response bytes went out (server role: nghttp2's data provider pulled them from a
  /// stream, inside mem_send). Inside nghttp2's callback: it only counts.
  func responseDataSent()
}

extension HTTP2SessionRole {
  func frameBegins(_ header: nghttp2_frame_hd) {}
  func resetSent(errorCode: UInt32) {}
  func headersRejected(streamID: Int32, reason: String) {}
  func callTimedOut() {}
  func resetNotQueued(_ id: Int32) {}
  func responseStarted() {}
  func drop() {}
  func responseDataSent() {}
  var readSlice: Int { .max }
}
