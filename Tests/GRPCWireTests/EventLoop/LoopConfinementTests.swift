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

  @Test("a channel's pool, reached off the channel's loop, stops the process")
  func poolOffLoopStops() async {
    await #expect(processExitsWith: .failure) {
      let channel = GRPCChannel(host: "127.0.0.1", port: 1)
      // The pool is not Sendable: other threads reach it only through this LoopBound.
      _ = channel.pool.value.openedConnectionCount
    }
  }

  @Test("a server's core, reached off its accepting loop, stops the process")
  func serverCoreOffLoopStops() async {
    await #expect(processExitsWith: .failure) {
      let server = GRPCServer()
      // The core is not Sendable: other threads reach it only through this LoopBound.
      _ = server.core.value.loops
    }
  }
}
