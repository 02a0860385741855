internal import Synchronization

/// The request bytes a channel's streaming calls keep for replay at once, against
/// ``ChannelOptions/retryBufferSize`` (A6: "a per-channel limit"). Any thread.
final class RetryBufferBudget: Sendable {
  let limit: Int
  private let used = Atomic<Int>(0)

  init(limit: Int) {
    self.limit = limit
  }

  /// Takes `count` bytes of the budget; false (nothing taken) when they would exceed it.
  func reserve(_ count: Int) -> Bool {
    var current = used.load(ordering: .relaxed)
    while true {
      guard current + count <= limit else { return false }
      let (exchanged, original) = used.compareExchange(
        expected: current, desired: current + count, ordering: .relaxed)
      if exchanged { return true }
      current = original
    }
  }

  /// Gives back `count` bytes taken by ``reserve(_:)``.
  func release(_ count: Int) {
    guard count > 0 else { return }
    used.subtract(count, ordering: .relaxed)
  }

  /// Bytes held now (for tests and logs).
  var inUse: Int { used.load(ordering: .relaxed) }
}
