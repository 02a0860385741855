import Testing

@testable import GRPCWire

/// The pool's queue of calls waiting for a stream: order kept, calls that ended while
/// waiting skipped, and a queue that never moves kept bounded.
@Suite("Call queue")
struct CallQueueTests {
  final class Call: QueuedCall {
    let id: Int
    var hasEnded = false
    init(_ id: Int) { self.id = id }
  }

  @Test("calls come out in the order they went in")
  func order() {
    var queue = CallQueue<Call>()
    #expect(queue.isEmpty)
    for id in 0..<5 { queue.append(Call(id)) }
    var taken: [Int] = []
    while let call = queue.first() {
      taken.append(call.id)
      queue.removeFirst()
    }
    #expect(taken == [0, 1, 2, 3, 4])
    #expect(queue.isEmpty && queue.storedCount == 0)
  }

  @Test("first() leaves the call in place until it is taken")
  func firstKeeps() {
    var queue = CallQueue<Call>()
    queue.append(Call(1))
    queue.append(Call(2))
    #expect(queue.first()?.id == 1)
    #expect(queue.first()?.id == 1)
    queue.removeFirst()
    #expect(queue.first()?.id == 2)
  }

  @Test("calls that ended while waiting are skipped, and removeAll returns only the living")
  func endedSkipped() {
    var queue = CallQueue<Call>()
    let calls = (0..<6).map(Call.init)
    for call in calls { queue.append(call) }
    calls[0].hasEnded = true
    calls[2].hasEnded = true
    #expect(queue.first()?.id == 1)
    queue.removeFirst()
    #expect(queue.first()?.id == 3)
    calls[4].hasEnded = true
    #expect(queue.removeAll().map(\.id) == [3, 5])
    #expect(queue.isEmpty && queue.first() == nil)
  }

  @Test("a queue that never moves, of calls that keep ending, stays bounded")
  func bounded() {
    var queue = CallQueue<Call>()
    let waiting = Call(-1)
    queue.append(waiting)
    var most = 0
    for id in 0..<100_000 {
      let call = Call(id)
      queue.append(call)
      call.hasEnded = true  // its deadline passed while it waited
      most = max(most, queue.storedCount)
    }
    #expect(most <= 128, "the queue held \(most) entries for one living call")
    #expect(queue.first()?.id == -1)
  }
}
