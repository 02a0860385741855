internal import Glibc

/// A point on the monotonic clock (CLOCK_MONOTONIC), in nanoseconds.
package struct MonotonicInstant: Comparable, Hashable, Sendable {
  package var nanoseconds: UInt64

  package init(nanoseconds: UInt64) {
    self.nanoseconds = nanoseconds
  }

  package static var now: MonotonicInstant {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return MonotonicInstant(nanoseconds: UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec))
  }

  package static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }

  /// `self` plus `duration`, saturating instead of overflowing for huge timeouts.
  package func advanced(by duration: Duration) -> MonotonicInstant {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0 else { return self }
    let (ns, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return MonotonicInstant(nanoseconds: .max) }
    let (sum, overflow2) = nanoseconds.addingReportingOverflow(ns + UInt64(attoseconds / 1_000_000_000))
    return MonotonicInstant(nanoseconds: overflow2 ? .max : sum)
  }

  /// The time from `self` to `later`, zero if `later` is not later.
  package func duration(to later: MonotonicInstant) -> Duration {
    later > self ? .nanoseconds(Int64(clamping: later.nanoseconds - nanoseconds)) : .zero
  }
}

/// Identifies a scheduled timer, for cancelling it.
package struct TimerID: Hashable, Sendable {
  fileprivate var value: UInt64
}

/// The loop's timers: a binary min-heap of deadlines, with each timer's body kept apart so that
/// cancelling drops the body — and whatever it captured — at once. The heap entry itself is
/// skipped when it reaches the top, so cancel is O(1) and the common case, a deadline that
/// never fires because the call finished, costs no heap surgery.
struct TimerHeap {
  private struct Entry {
    var deadline: MonotonicInstant
    var id: UInt64
  }

  private var heap: [Entry] = []
  private var bodies: [UInt64: () -> Void] = [:]
  private var nextID: UInt64 = 0

  mutating func insert(_ deadline: MonotonicInstant, _ body: @escaping () -> Void) -> TimerID {
    nextID += 1
    heap.append(Entry(deadline: deadline, id: nextID))
    bodies[nextID] = body
    siftUp(heap.count - 1)
    return TimerID(value: nextID)
  }

  mutating func cancel(_ id: TimerID) {
    bodies[id.value] = nil
  }

  /// Forgets every timer (the loop is stopping).
  mutating func removeAll() {
    heap.removeAll()
    bodies.removeAll()
  }

  /// The epoll_wait timeout: -1 with no timers, else milliseconds until the next one,
  /// rounded up so the loop never wakes just before a deadline and spins.
  mutating func millisecondsUntilNext(now: MonotonicInstant) -> Int32 {
    dropCancelledTop()
    guard let first = heap.first else { return -1 }
    guard first.deadline > now else { return 0 }
    let ns = first.deadline.nanoseconds - now.nanoseconds
    return Int32(clamping: (ns + 999_999) / 1_000_000)
  }

  /// Removes and returns the earliest timer whose deadline has passed. The caller runs it
  /// outside this mutation: a timer body may itself schedule or cancel timers.
  mutating func popDue(now: MonotonicInstant) -> (() -> Void)? {
    dropCancelledTop()
    guard let first = heap.first, first.deadline <= now else { return nil }
    removeTop()
    return bodies.removeValue(forKey: first.id)
  }

  private mutating func dropCancelledTop() {
    while let first = heap.first, bodies[first.id] == nil {
      removeTop()
    }
  }

  private mutating func removeTop() {
    let last = heap.removeLast()
    guard !heap.isEmpty else { return }
    heap[0] = last
    siftDown(0)
  }

  private mutating func siftUp(_ index: Int) {
    var child = index
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].deadline < heap[parent].deadline else { return }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  private mutating func siftDown(_ index: Int) {
    var parent = index
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
      if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
      if smallest == parent { return }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
  }
}
