internal import FleetSync

/// A channel's connectivity state and the streams that watch it: read and watched from any
/// thread, changed by the channel's pool on its loop.
final class ConnectivityObservers: Sendable {
  private struct Observed {
    var state = ConnectivityState.idle
    var observers: [Int: AsyncStream<ConnectivityState>.Continuation] = [:]
    var nextObserver = 0
  }

  private let observed = PosixMutex(Observed())

  var state: ConnectivityState { observed.withLock { $0.state } }

  /// The current state, then every change, until shutdown.
  func states() -> AsyncStream<ConnectivityState> {
    let (stream, continuation) = AsyncStream.makeStream(of: ConnectivityState.self)
    let finished = observed.withLock { o -> Bool in
      continuation.yield(o.state)
      if o.state == .shutdown { return true }
      let id = o.nextObserver
      o.nextObserver += 1
      o.observers[id] = continuation
      continuation.onTermination = { [weak self] _ in
        _ = self?.observed.withLock { $0.observers.removeValue(forKey: id) }
      }
      return false
    }
    if finished { continuation.finish() }
    return stream
  }

  /// Changes the state and tells the watchers (shutdown ends their streams); false when it
  /// was that already.
  func set(_ state: ConnectivityState) -> Bool {
    let (observers, changed) = observed.withLock { o -> ([AsyncStream<ConnectivityState>.Continuation], Bool) in
      guard o.state != state else { return ([], false) }
      o.state = state
      let all = Array(o.observers.values)
      if state == .shutdown { o.observers.removeAll() }
      return (all, true)
    }
    for observer in observers {
      observer.yield(state)
      if state == .shutdown { observer.finish() }
    }
    return changed
  }
}
