/// The next due call of every followed trip of one event loop: a binary min-heap keyed by
/// due time (nanoseconds on the monotonic clock).
///
/// An entry is the model and its loop generation, 24 bytes: no closure, timer or task per
/// trip. Entries are never removed early; one whose generation has been stopped meanwhile
/// is popped when due and its model ignores it (``TripFollower`` drops a stale generation).
struct PollQueue {
  struct Entry {
    var due: UInt64
    var generation: UInt64
    /// Retained while queued. Unmanaged, so that moving entries through the heap costs no
    /// reference counting: a model is also referenced weakly (by its service's registry),
    /// which sends every retain and release of it down the runtime's slow path.
    var model: Unmanaged<TripModel>
  }

  private var heap: [Entry] = []

  var isEmpty: Bool { heap.isEmpty }

  /// How many entries are queued (for tests and diagnostics).
  var count: Int { heap.count }

  /// The earliest due time, nil when empty.
  var earliest: UInt64? { heap.first?.due }

  mutating func insert(due: UInt64, model: TripModel, generation: UInt64) {
    heap.append(Entry(due: due, generation: generation, model: .passRetained(model)))
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].due < heap[parent].due else { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  /// Removes the earliest entry due at or before `now`; returns its model (now released by
  /// the queue), generation and due time.
  mutating func popDue(now: UInt64) -> (model: TripModel, generation: UInt64, due: UInt64)? {
    guard let first = heap.first, first.due <= now else { return nil }
    let popped = (first.model.takeRetainedValue(), first.generation, first.due)
    let last = heap.removeLast()
    guard !heap.isEmpty else { return popped }
    heap[0] = last
    var parent = 0
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count, heap[left].due < heap[smallest].due { smallest = left }
      if right < heap.count, heap[right].due < heap[smallest].due { smallest = right }
      if smallest == parent { break }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
    return popped
  }

  /// Forgets every entry (the service is going away).
  mutating func removeAll() {
    for entry in heap { entry.model.release() }
    heap.removeAll()
  }
}
