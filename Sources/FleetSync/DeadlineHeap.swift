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
    var child = entries.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard entries[child].deadline < entries[parent].deadline else { break }
      entries.swapAt(child, parent)
      child = parent
    }
  }

  /// Removes and returns the earliest element whose deadline is at or before `now`.
  @inlinable
  public mutating func popDue(now: Int64) -> (deadline: Int64, element: Element)? {
    guard let first = entries.first, first.deadline <= now else { return nil }
    let last = entries.removeLast()
    guard !entries.isEmpty else { return first }
    entries[0] = last
    var parent = 0
    while true {
      let left = 2 * parent + 1
      guard left < entries.count else { break }
      let right = left + 1
      let child =
        right < entries.count && entries[right].deadline < entries[left].deadline ? right : left
      guard entries[child].deadline < entries[parent].deadline else { break }
      entries.swapAt(child, parent)
      parent = child
    }
    return first
  }

  /// Forgets every element.
  public mutating func removeAll() {
    entries.removeAll()
  }
}

extension DeadlineHeap: Sendable where Element: Sendable {}
