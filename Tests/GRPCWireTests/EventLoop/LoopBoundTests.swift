import Testing

@testable import GRPCWire

/// A loop-bound value is read and changed on its loop's thread.
@Suite("Loop-bound values")
struct LoopBoundTests {
  final class Holder: @unchecked Sendable {
    // @unchecked Sendable: `count` is loop-bound.
    var count: LoopBound<Int>
    init(loop: EventLoop) { count = LoopBound(0, on: loop) }
  }

  @Test("made off the loop, changed in place on it, read back on it")
  func changedOnLoop() async {
    let loop = EventLoop(name: "LoopBoundTests")
    defer { loop.shutdown() }
    let holder = Holder(loop: loop)
    let seen = await withCheckedContinuation { (c: CheckedContinuation<Int, Never>) in
      loop.execute {
        for _ in 0..<5 { holder.count.value += 1 }
        c.resume(returning: holder.count.value)
      }
    }
    #expect(seen == 5)
    #expect(holder.count.loop === loop)
  }
}
