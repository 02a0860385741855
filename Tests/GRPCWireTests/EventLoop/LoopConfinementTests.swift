import Testing

@testable import GRPCWire

/// The transport's loop-only state is reached through entry points that check the thread in
/// every build (``EventLoop/checkInLoop(_:_:)``): on the loop they pass, and off it the
/// process stops instead of racing with the loop. A trap cannot be caught inside a test, so
/// the stop is seen from outside, in an exit test's own process.
@Suite("Loop confinement, checked in every build")
struct LoopConfinementTests {
  @Test("the check's predicate: true on the loop's thread, false on any other")
  func predicate() async {
    let loop = EventLoop(name: "LoopConfinementTests")
    defer { loop.shutdown() }
    let other = EventLoop(name: "LoopConfinementTests-other")
    defer { other.shutdown() }
    #expect(!loop.inEventLoop, "a test's thread is no loop's")
    let (own, others) = await withCheckedContinuation {
      (c: CheckedContinuation<(Bool, Bool), Never>) in
      loop.execute {
        loop.checkInLoop()
        c.resume(returning: (loop.inEventLoop, other.inEventLoop))
      }
    }
    #expect(own)
    #expect(!others, "one loop's thread is not another's")
  }

  @Test("the check off the loop stops the process")
  func offLoopStops() async {
    await #expect(processExitsWith: .failure) {
      let loop = EventLoop(name: "LoopConfinementTests-off")
      loop.checkInLoop()
    }
  }

  @Test("a call's loop-only entry point, reached off the loop, stops the process")
  func streamOffLoopStops() async {
    await #expect(processExitsWith: .failure) {
      let loop = EventLoop(name: "LoopConfinementTests-stream")
      let stream = ClientStream(
        loop: loop, headerPrefix: RequestHeaderPrefix(path: "/s/m", fields: []),
        requestHeaders: [], initialRequest: [], finished: true, maxReceiveSize: 1 << 20,
        timeout: nil)
      // The caller's task may only hand the loop its work (`cancel` does, with `execute`);
      // failing the call itself is the loop's.
      stream.fail(RPCError(code: .cancelled, message: "off the loop"), reset: true)
    }
  }
}
