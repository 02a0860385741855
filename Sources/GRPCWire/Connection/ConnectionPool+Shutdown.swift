/// Shutting down: new calls refused, open ones given a grace period, then every connection
/// closed (loop-only, as the pool).
extension ConnectionPool {
  /// Stops new calls, lets open ones finish for up to `gracePeriod`, then cancels the rest and
  /// closes every connection. Resumes `done` when nothing is left.
  func shutdown(gracePeriod: Duration, done: CheckedContinuation<Void, Never>?) {
    loop.checkInLoop()
    switch shutdownState {
    case .shutdown:
      done?.resume()
      return
    case .draining(let waiters):
      shutdownState = .draining(done: waiters + (done.map { [$0] } ?? []))
      return
    case .running:
      shutdownState = .draining(done: done.map { [$0] } ?? [])
    }
    if let retryTimer {
      loop.cancelTimer(retryTimer)
      self.retryTimer = nil
    }
    let closed = RPCError(code: .unavailable, message: "the channel to \(target) is closed")
    for stream in waitingForReady.removeAll() { stream.fail(closed, reset: false) }
    readyWaiters.removeAll()
    for stream in retryingLater { stream.fail(closed, reset: false) }
    retryingLater.removeAll()
    for stream in waitingForStream.removeAll() { stream.fail(closed, reset: false) }
    // Connections that were not ready yet have nothing worth waiting for.
    for connection in connections where !connection.isReady && !connection.goingAway {
      connection.shutDown(closed)
    }
    let cancelled = RPCError(
      code: .cancelled, message: "the channel was closed before the call finished")
    let closeNow = { [self] in
      for connection in connections { connection.cancelAll(cancelled) }
      for connection in connections { connection.shutDown(closed) }
      if connections.isEmpty { finishShutdown() }
    }
    if gracePeriod <= .zero || connections.allSatisfy({ $0.openCallCount == 0 }) {
      closeNow()
    } else {
      _ = loop.scheduleTimer(at: .now.advanced(by: gracePeriod), closeNow)
      // Connections close themselves as their last call ends (see callEnded).
    }
  }

  /// A call on `connection` ended: a call waiting for a stream may take its place; during a
  /// graceful shutdown an idle connection closes.
  func callEnded(on connection: ClientConnection) {
    // At once, not through the loop's queue: a stream's close is handed over once nghttp2
    // has returned, so the calls waiting for a stream may be submitted now.
    startWaitingCalls()
    guard case .draining = shutdownState, connection.openCallCount == 0, !connection.isClosed
    else { return }
    // At once, not through the loop's queue: the close is handed over once nghttp2 has
    // returned, and what is left of the session's batch after the connection ends its session
    // is dropped, not handed to it (HTTP2Session.deliver). The role is held by whoever is
    // handing the batch over (the loop's read, or the end-of-tick flush).
    connection.shutDown(RPCError(code: .unavailable, message: "the channel to \(target) is closed"))
  }

  func finishShutdown() {
    guard case .draining(let waiters) = shutdownState else { return }
    shutdownState = .shutdown
    options.sharedConnections?.stopWaking(ObjectIdentifier(self))
    setState(.shutdown)
    for waiter in waiters { waiter.resume() }
  }
}
