import FleetSync
import Testing

/// FleetSync's heap of deadlines, which orders every followed trip's next poll: held to a
/// sorted list over random pushes and pops, with repeated deadlines.
@Suite("Deadline heap")
struct DeadlineHeapTests {
  @Test("pops come out earliest first, only those due, as a sorted list says", arguments: 0..<4)
  func againstSorted(seed: UInt64) {
    var generator = TripMergeEquivalenceTests.Generator(state: seed)
    var heap = DeadlineHeap<Int>()
    var reference: [(deadline: Int64, id: Int)] = []
    var now: Int64 = 0
    for id in 0..<3_000 {
      // Deadlines ahead of now, few enough distinct ones that many repeat.
      let deadline = now + Int64(generator.next() % 500)
      heap.push(id, at: deadline)
      reference.append((deadline, id))
      if generator.next() % 3 == 0 {
        now += Int64(generator.next() % 200)
        var popped: [(Int64, Int)] = []
        while let (deadline, id) = heap.popDue(now: now) { popped.append((deadline, id)) }
        let due = reference.filter { $0.deadline <= now }
        reference.removeAll { $0.deadline <= now }
        #expect(popped.map(\.0) == due.map(\.deadline).sorted())
        #expect(Set(popped.map(\.1)) == Set(due.map(\.id)))
        #expect(heap.count == reference.count)
        #expect(heap.earliest == reference.map(\.deadline).min())
      }
    }
  }
}
