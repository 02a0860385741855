internal import FleetSync

/// Connections that the channels of one owner share out (``ChannelOptions/sharedConnections``):
/// a `TripService` has a channel per event loop, and together they keep to the service's
/// most connections; so may any user running one channel per loop to the same target.
///
/// Every channel may always open its first connection; each one beyond that takes a place
/// from here and gives it back when it goes away (GOAWAY) or closes. So the channels open at
/// most `places` connections more than their number, and a busy one may use them all while
/// the others need one each. A channel whose calls wait for a place is woken when another
/// channel gives one back. Any thread.
public final class SharedConnections: Sendable {
  private struct State {
    var free: Int
    /// Per waiting channel, how to wake it (a hop to its loop).
    var wakers: [ObjectIdentifier: @Sendable () -> Void] = [:]
  }

  private let state: PosixMutex<State>

  /// `places` connections, beyond each channel's first, for all the channels to share.
  public init(places: Int) {
    state = PosixMutex(State(free: max(0, places)))
  }

  /// Places not taken now.
  public var free: Int { state.withLock { $0.free } }

  /// Takes a place; false when none is free.
  func take() -> Bool {
    state.withLock { state in
      guard state.free > 0 else { return false }
      state.free -= 1
      return true
    }
  }

  /// Gives a place back and wakes the channels that wait for one.
  func giveBack() {
    let wakers = state.withLock { state in
      state.free += 1
      return Array(state.wakers.values)
    }
    for wake in wakers { wake() }
  }

  /// Calls `wake` whenever a place is given back, until ``stopWaking(_:)``.
  func wake(_ owner: ObjectIdentifier, with wake: @escaping @Sendable () -> Void) {
    state.withLock { $0.wakers[owner] = wake }
  }

  func stopWaking(_ owner: ObjectIdentifier) {
    _ = state.withLock { $0.wakers.removeValue(forKey: owner) }
  }
}
