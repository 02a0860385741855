import FleetSync
import Testing

/// FleetSync's heap of deadlines, which orders every followed trip's next poll: held to a
/// sorted list over random pushes and pops, with repeated deadlines.
@Suite("Deadline heap")
struct DeadlineHeapTests {
  @Test("pops come out earliest first, only those due, as a sorted list says", arguments: 0..<4)
  func againstSorted(seed: UInt64) {
    var generator = SplitMix(state: seed)
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

  struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }
}
