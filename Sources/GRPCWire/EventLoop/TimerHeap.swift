internal import Glibc

/// A point on the monotonic clock (CLOCK_MONOTONIC), in nanoseconds: what the loop's timers
/// (``EventLoop/scheduleTimer(at:_:)``) are armed for.
public struct MonotonicInstant: Comparable, Hashable, Sendable {
  /// Nanoseconds since an unspecified point (the machine's boot, on Linux).
  public var nanoseconds: UInt64

  public init(nanoseconds: UInt64) {
    self.nanoseconds = nanoseconds
  }

  /// The clock now.
  public static var now: MonotonicInstant {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return MonotonicInstant(nanoseconds: UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec))
  }

  public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }

  /// `self` plus `duration`, saturating instead of overflowing for huge timeouts.
  public func advanced(by duration: Duration) -> MonotonicInstant {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0 else { return self }
    let (ns, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return MonotonicInstant(nanoseconds: .max) }
    let (sum, overflow2) = nanoseconds.addingReportingOverflow(
      ns + UInt64(attoseconds / 1_000_000_000))
    return MonotonicInstant(nanoseconds: overflow2 ? .max : sum)
  }

  /// The time from `self` to `later`, zero if `later` is not later.
  public func duration(to later: MonotonicInstant) -> Duration {
    later > self ? .nanoseconds(Int64(clamping: later.nanoseconds - nanoseconds)) : .zero
  }
}

/// An object a timer fires on, instead of a closure: scheduling it allocates nothing (a
/// closure capturing its owner is one allocation per timer, and every call arms one).
public protocol TimerTarget: AnyObject {
  /// The timer scheduled with this target is due; runs on the loop.
  func timerFired()
}

/// What a timer runs.
enum TimerBody {
  case closure(() -> Void)
  case target(any TimerTarget)

  func run() {
    switch self {
    case .closure(let body): body()
    case .target(let target): target.timerFired()
    }
  }
}

/// Identifies a scheduled timer, for cancelling it (``EventLoop/cancelTimer(_:)``): its slot
/// and the slot's generation, so a stale ID never cancels the slot's next timer.
public struct TimerID: Hashable, Sendable {
  fileprivate var slot: Int32
  fileprivate var generation: UInt32
}

/// The loop's timers: a binary min-heap of deadlines over slots that hold the bodies.
///
/// Each slot knows its entry's place in the heap, so cancelling removes the entry at once
/// (O(log n) in the timers still pending) and drops the body — and whatever it captured —
/// with it. Nearly every timer is cancelled (a call's deadline, when the call ends first), so
/// the heap holds only what is really pending, not every deadline of the last call timeout.
/// Slots are reused through a free list (no hashing per timer); a slot's generation tells a
/// stale ID from the slot's next timer.
struct TimerHeap {
  private struct Entry {
    var deadline: MonotonicInstant
    var slot: Int32
  }

  private struct Slot {
    var generation: UInt32 = 0
    /// Where the slot's entry is in `heap`; -1 when the slot is free.
    var index: Int32 = -1
    var body: TimerBody?
  }

  private var heap: [Entry] = []
  private var slots: [Slot] = []
  private var freeSlots: [Int32] = []

  /// How many timers are pending (for tests and diagnostics).
  var count: Int { heap.count }

  mutating func insert(_ deadline: MonotonicInstant, _ body: @escaping () -> Void) -> TimerID {
    insert(deadline, .closure(body))
  }

  mutating func insert(_ deadline: MonotonicInstant, _ body: TimerBody) -> TimerID {
    let slot: Int32
    if let reused = freeSlots.popLast() {
      slot = reused
    } else {
      slot = Int32(slots.count)
      slots.append(Slot())
    }
    slots[Int(slot)].generation &+= 1
    slots[Int(slot)].body = body
    heap.append(Entry(deadline: deadline, slot: slot))
    slots[Int(slot)].index = Int32(heap.count - 1)
    siftUp(heap.count - 1)
    return TimerID(slot: slot, generation: slots[Int(slot)].generation)
  }

  /// Removes the timer unless it already ran or was cancelled.
  mutating func cancel(_ id: TimerID) {
    guard Int(id.slot) < slots.count else { return }
    let slot = slots[Int(id.slot)]
    guard slot.generation == id.generation, slot.index >= 0 else { return }
    remove(at: Int(slot.index))
  }

  /// Forgets every timer (the loop is stopping).
  mutating func removeAll() {
    heap.removeAll()
    slots.removeAll()
    freeSlots.removeAll()
  }

  /// The epoll_wait timeout: -1 with no timers, else milliseconds until the next one,
  /// rounded up so the loop never wakes just before a deadline and spins.
  func millisecondsUntilNext(now: MonotonicInstant) -> Int32 {
    guard let first = heap.first else { return -1 }
    guard first.deadline > now else { return 0 }
    let ns = first.deadline.nanoseconds - now.nanoseconds
    return Int32(clamping: (ns + 999_999) / 1_000_000)
  }

  /// Removes and returns the earliest timer whose deadline has passed. The caller runs it
  /// outside this mutation: a timer body may itself schedule or cancel timers.
  mutating func popDue(now: MonotonicInstant) -> TimerBody? {
    guard let first = heap.first, first.deadline <= now else { return nil }
    let body = slots[Int(first.slot)].body
    remove(at: 0)
    return body
  }

  /// Takes the entry at `index` out of the heap and frees its slot.
  private mutating func remove(at index: Int) {
    let slot = Int(heap[index].slot)
    slots[slot].body = nil
    slots[slot].index = -1
    freeSlots.append(Int32(slot))
    let last = heap.removeLast()
    guard index < heap.count else { return }
    heap[index] = last
    slots[Int(last.slot)].index = Int32(index)
    siftDown(index)
    siftUp(index)
  }

  private mutating func swapEntries(_ a: Int, _ b: Int) {
    heap.swapAt(a, b)
    slots[Int(heap[a].slot)].index = Int32(a)
    slots[Int(heap[b].slot)].index = Int32(b)
  }

  private mutating func siftUp(_ index: Int) {
    var child = index
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].deadline < heap[parent].deadline else { return }
      swapEntries(child, parent)
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
      swapEntries(parent, smallest)
      parent = smallest
    }
  }
}
