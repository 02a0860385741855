internal import CNGHTTP2

/// A response's parts submitted for a stream that holds its session rather than its
/// connection (a server's call): its headers, with the body that follows them or alone, and
/// its trailers; and what becomes of a part nghttp2 refuses.
extension HTTP2Session {
  /// Submits the response headers `fields` of stream `id`, then the body nghttp2 pulls from
  /// `body` (the role's stream object: ``bodyProvider(for:)``), or, with no body, as the
  /// whole answer (trailers-only, ending the stream). The role hears first of a response with
  /// a body (``HTTP2SessionRole/responseStarted()``). Nothing once the session has ended.
  func submitResponse(_ id: Int32, _ fields: [HeaderField], body: StreamCore?) {
    guard let nghttp2, let role else { return }
    guard let body else {
      return checkSubmitted(
        HeaderBlock.withNameValues(fields) { nghttp2_submit_response(nghttp2, id, $0, $1, nil) },
        id)
    }
    role.responseStarted()
    var provider = HTTP2Session.bodyProvider(for: body)
    let submitted = HeaderBlock.withNameValues(fields) { nva, count in
      nghttp2_submit_response(nghttp2, id, nva, count, &provider)
    }
    checkSubmitted(submitted, id)
  }

  /// Submits the trailers `fields` of stream `id`, sent once its body is over (a response's
  /// body ends without END_STREAM: ``bodyProvider(for:)``). Called from the data provider,
  /// inside mem_send, too. Nothing once the session has ended.
  func submitTrailers(_ id: Int32, _ fields: [HeaderField]) {
    guard let nghttp2 else { return }
    checkSubmitted(
      HeaderBlock.withNameValues(fields) { nghttp2_submit_trailer(nghttp2, id, $0, $1) }, id)
  }

  /// A flush for what was submitted for stream `id`; and when nghttp2 refused it (`result`
  /// not 0: out of memory, fields it will not send, a body it cannot resume), the call cannot
  /// be answered as it is, so the stream is reset with INTERNAL_ERROR; if even that cannot be
  /// queued, the role hears of it (``HTTP2SessionRole/resetNotQueued(_:)``: the connection
  /// goes).
  func checkSubmitted(_ result: Int32, _ id: Int32) {
    scheduleFlush()
    guard result != 0 else { return }
    reset(id, code: HTTP2ErrorCode.internalError)
  }

  /// Closes the connection at once, without GOAWAY (fault injection: a server handler's
  /// ``ServerContext/dropConnection()``), through the role (``HTTP2SessionRole/drop()``).
  /// Nothing once the session has ended. Loop only.
  func dropConnection() {
    loop.checkInLoop()
    guard nghttp2 != nil, let role else { return }
    role.drop()
  }
}
