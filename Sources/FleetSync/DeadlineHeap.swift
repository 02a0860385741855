/// A binary min-heap of elements by deadline (any 64-bit count that only grows: nanoseconds
/// of a monotonic clock, ticks since an origin): the earliest first.
///
/// For timers that keep one entry per waiting thing and never remove one early (a stale
/// entry is skipped by its owner when it comes out). Inlinable, so each user gets a version
/// specialized for its element: no generic dispatch on a path that runs per poll.
public struct DeadlineHeap<Element> {
  @usableFromInline var entries: [(deadline: Int64, element: Element)] = []

  public init() {}

  public var isEmpty: Bool { entries.isEmpty }

  /// How many elements are waiting.
  public var count: Int { entries.count }

  /// The earliest deadline; nil when empty.
  public var earliest: Int64? { entries.first?.deadline }

  /// Every element, in no particular order (to release them, say).
  public var elements: some Collection<Element> { entries.lazy.map(\.element) }

  @inlinable
  public mutating func push(_ element: Element, at deadline: Int64) {
    entries.append((deadline, element))
    // Sifted up as a hole: the parents it passes move down one place each, and the new
    // entry is written once where it stops (no swaps, no per-step checks of the array).
    entries.withUnsafeMutableBufferPointer { heap in
      var child = heap.count - 1
      let new = heap[child]
      while child > 0 {
        let parent = (child - 1) / 2
        guard new.deadline < heap[parent].deadline else { break }
        heap[child] = heap[parent]
        child = parent
      }
      heap[child] = new
    }
  }

  /// Removes and returns the earliest element whose deadline is at or before `now`.
  @inlinable
  public mutating func popDue(now: Int64) -> (deadline: Int64, element: Element)? {
    guard let first = entries.first, first.deadline <= now else { return nil }
    let last = entries.removeLast()
    guard !entries.isEmpty else { return first }
    // The last entry sifted down from the top as a hole (see push).
    entries.withUnsafeMutableBufferPointer { heap in
      let count = heap.count
      var parent = 0
      while true {
        let left = 2 * parent + 1
        guard left < count else { break }
        let right = left + 1
        let child =
          right < count && heap[right].deadline < heap[left].deadline ? right : left
        guard heap[child].deadline < last.deadline else { break }
        heap[parent] = heap[child]
        parent = child
      }
      heap[parent] = last
    }
    return first
  }

  /// Forgets every element.
  public mutating func removeAll() {
    entries.removeAll()
  }
}

extension DeadlineHeap: Sendable where Element: Sendable {}
