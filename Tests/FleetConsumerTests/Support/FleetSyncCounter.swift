import FleetSync

/// A counter shared across tasks.
final class FleetSyncCounter: Sendable {
  private let count = PosixMutex(0)

  /// Adds one; returns the new value.
  @discardableResult
  func increment() -> Int {
    count.withLock { value in
      value += 1
      return value
    }
  }

  var value: Int { count.withLock { $0 } }
}
