internal import CNGHTTP2
internal import Logging

/// Keepalive PINGs to a silent client, policing of the client's PINGs, and the idle and
/// age limits of a connection.
extension ServerConnection {
  /// A PING from the client (nghttp2 answers it): too many too close together end the
  /// connection.
  func pingReceived() {
    let now = MonotonicInstant.now
    defer { lastClientPingAt = now }
    guard let last = lastClientPingAt, now < last.advanced(by: options.minPingInterval) else { return }
    pingStrikes += 1
    guard pingStrikes > options.maxPingStrikes, let nghttp2 = session.nghttp2 else { return }
    logger.notice("too many PINGs: GOAWAY ENHANCE_YOUR_CALM too_many_pings")
    // gRPC's client keepalive (A8) reads this debug data and doubles its interval.
    let debug = Array("too_many_pings".utf8)
    let sent = nghttp2_submit_goaway(
      nghttp2, UInt8(NGHTTP2_FLAG_NONE.rawValue), nghttp2_session_get_last_proc_stream_id(nghttp2),
      HTTP2ErrorCode.enhanceYourCalm, debug, debug.count)
    // Without the GOAWAY queued, end the session at once (nghttp2 then stops reading).
    if sent != 0 { nghttp2_session_terminate_session(nghttp2, HTTP2ErrorCode.enhanceYourCalm) }
    machine.finalGoAwayQueued()
  }

  /// Response data went out: PINGs that follow are fair (a client measuring bandwidth PINGs
  /// as data arrives), so the strikes start again, as gRPC servers count them.
  func responseDataSent() { pingStrikes = 0 }

  /// Checks for a silent client `delay` from now: PING it if nothing came for an interval.
  func armKeepalive(after delay: Duration?) {
    guard let delay, session.transport != nil else { return }
    keepaliveTimer = loop.scheduleTimer(at: .now.advanced(by: delay)) { [self] in
      keepaliveDue()
    }
  }

  func keepaliveDue() {
    keepaliveTimer = nil
    guard let interval = options.keepaliveInterval, let nghttp2 = session.nghttp2, session.transport != nil else { return }
    if pingOutstanding {
      // The PING sent a timeout ago is still unanswered: the client is gone.
      logger.debug("keepalive PING unanswered: closing the connection")
      return closeSocket()
    }
    let due = lastFrameAt.advanced(by: interval)
    if MonotonicInstant.now < due {
      return armKeepalive(after: .nanoseconds(Int64(due.nanoseconds - MonotonicInstant.now.nanoseconds)))
    }
    pingOutstanding = true
    guard nghttp2_submit_ping(nghttp2, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil) == 0 else {
      return closeSocket()
    }
    scheduleFlush()
    armKeepalive(after: options.keepaliveTimeout)
  }

  /// With ``ServerOptions/maxConnectionIdle``: closes the connection if no call starts in time.
  func armIdleTimer() {
    guard let idle = options.maxConnectionIdle, idleTimer == nil, session.transport != nil else { return }
    // Strong: the timer is cancelled when a call starts or the socket closes.
    idleTimer = loop.scheduleTimer(at: .now.advanced(by: idle)) { [self] in
      idleTimer = nil
      guard session.streams.isEmpty else { return }
      beginDraining()
    }
  }

  /// ``ServerOptions/maxConnectionAge`` passed: GOAWAY, and the grace period for the calls.
  func reachedMaxAge() {
    guard session.transport != nil else { return }
    beginDraining()
    if let grace = options.maxConnectionAgeGrace {
      ageTimer = loop.scheduleTimer(at: .now.advanced(by: grace)) { [self] in
        ageTimer = nil
        guard let nghttp2 = session.nghttp2 else { return }
        // The calls still open end with the connection (UNAVAILABLE to their clients), not
        // each with a reset: CANCEL would read as the client's own doing.
        // Closing regardless: the GOAWAY is a courtesy here.
        _ = nghttp2_session_terminate_session(nghttp2, HTTP2ErrorCode.noError)
        flush()
        closeSocket()
      }
    }
  }
}
