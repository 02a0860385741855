internal import CNGHTTP2
internal import Logging

/// Keepalive PINGs while calls are open, and a PING at once when a call times out on a
/// connection that has been quiet for a keepalive timeout.
extension ClientConnection {
  func scheduleKeepalive() {
    guard let keepalive, keepaliveTimer == nil, pingTimeoutTimer == nil, isReady else { return }
    guard keepalive.permitWithoutCalls || openStreamCount > 0 else { return }
    let interval = pool?.keepaliveInterval ?? keepalive.interval
    keepaliveTimer = loop.scheduleTimer(at: .now.advanced(by: interval)) { [self] in
      keepaliveTimer = nil
      sendKeepalivePing()
    }
  }

  func sendKeepalivePing() {
    guard let keepalive, isReady else { return }
    guard keepalive.permitWithoutCalls || openStreamCount > 0 else { return }
    sendPing(
      deadReason: "a keepalive PING went unanswered for "
        + ClientStream.describe(keepalive.timeout))
  }

  /// A call's deadline passed on this connection. When nothing has arrived for a keepalive
  /// timeout either, the connection may be dead without a FIN or RST (a black-holed path, a
  /// lost NAT entry), and every call sent on it would time out the same way: PING at once
  /// rather than at the next keepalive interval — a poller's connection has a call open only
  /// now and then, so the periodic PING may never find one to go out with — and close the
  /// connection when the PING is not answered within the keepalive timeout, so that the next
  /// calls go to a new connection instead of this one. A PING already in flight decides alone.
  func callTimedOut() {
    guard let keepalive, case .ready = machine.state, pingTimeoutTimer == nil else { return }
    let quiet = lastReadAt.duration(to: .now)
    guard quiet >= keepalive.timeout else { return }
    if let keepaliveTimer {
      loop.cancelTimer(keepaliveTimer)
      self.keepaliveTimer = nil
    }
    sendPing(
      deadReason: "a call's deadline passed with nothing received for "
        + "\(ClientStream.describe(quiet)), and a keepalive PING sent to check went unanswered "
        + "for \(ClientStream.describe(keepalive.timeout))")
  }

  /// Sends a PING; unless its ACK comes within the keepalive timeout, the connection closes,
  /// failing its calls with UNAVAILABLE (interrupted) saying `deadReason`.
  func sendPing(deadReason: String) {
    guard let keepalive, let nghttp2 = session?.nghttp2 else { return }
    // A PING that cannot be queued (out of memory) is as good as one unanswered: the timer
    // below closes the connection.
    let queued = nghttp2_submit_ping(nghttp2, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil) == 0
    if queued { scheduleFlush() }
    logger.trace("PING sent", metadata: ["grpc.ping_reason": "\(deadReason)"])
    pingTimeoutTimer = loop.scheduleTimer(at: .now.advanced(by: keepalive.timeout)) { [self] in
      pingTimeoutTimer = nil
      logger.info("keepalive PING unanswered: closing the connection")
      close(with: .interrupted("the connection to \(target) is dead: \(deadReason)"))
    }
  }

  func pingAcknowledged() {
    if let pingTimeoutTimer {
      loop.cancelTimer(pingTimeoutTimer)
      self.pingTimeoutTimer = nil
    }
    scheduleKeepalive()
  }
}
