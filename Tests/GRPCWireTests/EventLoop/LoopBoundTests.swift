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
    // Everything about it is read on the loop: the holder's `count` is a var the loop
    // changes, so even its `loop` is not read from this task.
    let (seen, bound) = await withCheckedContinuation {
      (c: CheckedContinuation<(Int, Bool), Never>) in
      loop.execute {
        for _ in 0..<5 { holder.count.value += 1 }
        c.resume(returning: (holder.count.value, holder.count.loop === loop))
      }
    }
    #expect(seen == 5)
    #expect(bound)
  }

  @Test("read off its loop, it stops the process, in every build")
  func offLoopRead() async {
    await #expect(processExitsWith: .failure) {
      let loop = EventLoop(name: "LoopBoundTests-off")
      let bound = LoopBound(1, on: loop)
      // This test's own thread, not the loop's.
      _ = bound.value
    }
  }
}
