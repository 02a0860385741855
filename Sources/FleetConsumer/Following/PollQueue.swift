internal import FleetSync

/// The next due call of every followed trip of one event loop, earliest first, by due time
/// (nanoseconds on the monotonic clock): FleetSync's ``DeadlineHeap`` of models.
///
/// An entry is the model and its loop generation, 24 bytes: no closure, timer or task per
/// trip. Entries are never removed early; one whose generation has been stopped meanwhile
/// is popped when due and its model ignores it (``TripFollower`` drops a stale generation).
struct PollQueue {
  private struct Entry {
    var generation: UInt64
    /// Retained while queued. Unmanaged, so that moving entries through the heap costs no
    /// reference counting.
    var model: Unmanaged<TripModel>
  }

  private var heap = DeadlineHeap<Entry>()

  var isEmpty: Bool { heap.isEmpty }

  /// How many entries are queued (for tests and diagnostics).
  var count: Int { heap.count }

  /// The earliest due time, nil when empty.
  var earliest: UInt64? { heap.earliest.map { UInt64($0) } }

  mutating func insert(due: UInt64, model: TripModel, generation: UInt64) {
    heap.push(
      Entry(generation: generation, model: .passRetained(model)), at: Int64(clamping: due))
  }

  /// Removes the earliest entry due at or before `now`; returns its model (now released by
  /// the queue), generation and due time.
  mutating func popDue(now: UInt64) -> (model: TripModel, generation: UInt64, due: UInt64)? {
    guard let (due, entry) = heap.popDue(now: Int64(clamping: now)) else { return nil }
    return (entry.model.takeRetainedValue(), entry.generation, UInt64(due))
  }

  /// Forgets every entry (the service is going away), releasing their models.
  mutating func removeAll() {
    for entry in heap.elements { entry.model.release() }
    heap.removeAll()
  }
}
