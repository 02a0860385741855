import Testing

@testable import GRPCWire

/// nghttp2's callbacks only record (``HTTP2Session``): the paths that resume continuations,
/// cancel handler tasks, call observers or reset streams check that the loop is not inside
/// `mem_recv`/`mem_send`, and stop the process if it is, in every build. Every suite that runs
/// calls through a session passes those checks; this one proves the check is live.
@Suite("nghttp2 callbacks only record", .timeLimit(.minutes(1)))
struct CallbackConfinementTests {
  @Test("the check stops the process when the loop is inside nghttp2, and passes outside it")
  func checkIsLive() async {
    await #expect(processExitsWith: .failure) {
      let loop = EventLoop(name: "inside-nghttp2")
      await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        loop.execute {
          loop.insideNGHTTP2 = true
          loop.checkOutsideCallbacks()
          done.resume()
        }
      }
    }
    await #expect(processExitsWith: .success) {
      let loop = EventLoop(name: "outside-nghttp2")
      await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        loop.execute {
          loop.checkOutsideCallbacks()
          done.resume()
        }
      }
    }
  }
}
