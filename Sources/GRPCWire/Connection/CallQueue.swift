/// Something that may wait in a ``CallQueue``: it says when it has ended while waiting.
protocol QueuedCall: AnyObject {
  /// The call ended while it waited (its deadline passed, it was cancelled): it is dropped.
  var hasEnded: Bool { get }
}

/// Calls waiting, in order, for what the pool cannot give them yet (a free stream). Calls
/// that end while they wait are skipped when their turn comes, and pruned as the queue
/// doubles, so a queue that never moves does not grow without bound. Loop-only, as its pool.
struct CallQueue<Call: QueuedCall> {
  private var calls: [Call] = []
  /// Entries before it are taken.
  private var head = 0

  /// Whether no call waits (ended ones aside, perhaps).
  var isEmpty: Bool { head == calls.count }

  /// Entries held, ended ones included (for tests of the pruning).
  var storedCount: Int { calls.count - head }

  mutating func append(_ call: Call) {
    calls.append(call)
    let queued = calls.count - head
    if queued >= 64 && queued & (queued - 1) == 0 {
      calls = calls[head...].filter { !$0.hasEnded }
      head = 0
    }
  }

  /// The first call still waiting, left in the queue; nil when none is.
  mutating func first() -> Call? {
    while head < calls.count {
      if !calls[head].hasEnded { return calls[head] }
      head += 1
    }
    calls.removeAll()
    head = 0
    return nil
  }

  /// Takes the first entry (the call ``first()`` returned).
  mutating func removeFirst() {
    guard head < calls.count else { return }
    head += 1
    if head == calls.count {
      calls.removeAll()
      head = 0
    }
  }

  /// Takes every call still waiting, in order.
  mutating func removeAll() -> [Call] {
    defer {
      calls.removeAll()
      head = 0
    }
    return calls[head...].filter { !$0.hasEnded }
  }
}

extension ClientStream: QueuedCall {
  var hasEnded: Bool { outcome != nil }
}
