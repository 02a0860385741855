import Testing

@testable import GRPCWire

/// The loop's timer heap: due timers come out in deadline order, a cancelled one never
/// runs and leaves the heap at once, and a stale ID cannot cancel its slot's next timer.
@Suite("Timer heap")
struct TimerHeapTests {
  func at(_ ms: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: ms * 1_000_000) }

  /// Pops everything due by `now`, running each body; returns what ran, in order.
  func popAll(_ heap: inout TimerHeap, now: UInt64, _ ran: Box) -> [Int] {
    while let body = heap.popDue(now: at(now)) { body.run() }
    return ran.values
  }

  final class Box {
    var values: [Int] = []
  }

  @Test("timers run in deadline order; cancelled ones never run and leave at once")
  func orderAndCancel() {
    var heap = TimerHeap()
    let ran = Box()
    var ids: [Int: TimerID] = [:]
    let deadlines = (0..<200).map { ($0 * 7919) % 200 }
    for (index, deadline) in deadlines.enumerated() {
      ids[index] = heap.insert(at(UInt64(deadline))) { ran.values.append(deadline) }
    }
    #expect(heap.count == 200)
    // Cancel every timer whose deadline is odd.
    for (index, deadline) in deadlines.enumerated() where deadline % 2 == 1 {
      heap.cancel(ids[index]!)
    }
    #expect(heap.count == 100)
    #expect(heap.millisecondsUntilNext(now: at(0)) == 0)
    _ = popAll(&heap, now: 99, ran)
    #expect(ran.values == Array(stride(from: 0, through: 98, by: 2)))
    #expect(heap.millisecondsUntilNext(now: at(99)) == 1)
    _ = popAll(&heap, now: 1_000, ran)
    #expect(ran.values == Array(stride(from: 0, through: 198, by: 2)))
    #expect(heap.count == 0)
    #expect(heap.millisecondsUntilNext(now: at(0)) == -1)
  }

  @Test("a stale ID does not cancel the timer that reuses its slot; cancel twice is a no-op")
  func staleID() {
    var heap = TimerHeap()
    let ran = Box()
    let first = heap.insert(at(1)) { ran.values.append(1) }
    heap.cancel(first)
    heap.cancel(first)
    let second = heap.insert(at(2)) { ran.values.append(2) }
    heap.cancel(first)
    #expect(heap.count == 1)
    #expect(popAll(&heap, now: 5, ran) == [2])
    heap.cancel(second)
    #expect(heap.count == 0)
  }

  /// Records its firing; `released` tells when the heap let go of it.
  final class Target: TimerTarget {
    let ran: Box
    let value: Int
    init(_ ran: Box, _ value: Int) {
      self.ran = ran
      self.value = value
    }
    func timerFired() { ran.values.append(value) }
  }

  @Test("a target timer fires its target in deadline order; cancelled, the heap lets go of it")
  func targets() {
    var heap = TimerHeap()
    let ran = Box()
    _ = heap.insert(at(2), .target(Target(ran, 2)))
    _ = heap.insert(at(1)) { ran.values.append(1) }
    weak var cancelled: Target?
    do {
      let target = Target(ran, 3)
      cancelled = target
      heap.cancel(heap.insert(at(3), .target(target)))
    }
    #expect(cancelled == nil, "a cancelled timer still holds its target")
    #expect(popAll(&heap, now: 5, ran) == [1, 2])
  }

  @Test("a body may insert and cancel timers while the loop pops")
  func reentrant() {
    var heap = TimerHeap()
    let ran = Box()
    let later = heap.insert(at(10)) { ran.values.append(10) }
    _ = heap.insert(at(1)) { ran.values.append(1) }
    while let body = heap.popDue(now: at(5)) {
      body.run()
      heap.cancel(later)
      _ = heap.insert(at(3)) { ran.values.append(3) }
      break
    }
    #expect(popAll(&heap, now: 20, ran) == [1, 3])
  }
}
