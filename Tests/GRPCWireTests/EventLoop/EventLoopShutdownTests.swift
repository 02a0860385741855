import FleetSync
import Glibc
import Testing

@testable import GRPCWire

/// ``EventLoop/shutdown()`` acts once: a second call — a `defer` beside an owner's own
/// shutdown — neither joins an ended thread again nor closes descriptor numbers the process
/// has handed to someone else since. Each case runs in an exit test's own process, where no
/// other test opens descriptors, so the numbers the loop freed are the next ones given out.
@Suite("Event loop shutdown", .timeLimit(.minutes(1)))
struct EventLoopShutdownTests {
  @Test("a second shutdown off the loop returns and closes nobody else's descriptors")
  func secondShutdownOffTheLoop() async {
    await #expect(processExitsWith: .success) {
      let loop = EventLoop(name: "EventLoopShutdownTests-twice")
      loop.shutdown()
      // The loop's epoll descriptor and eventfd are closed: pipes take those numbers now.
      let pipes = EventLoopShutdownTests.openPipes()
      loop.shutdown()
      exit(EventLoopShutdownTests.allOpen(pipes) ? 0 : 1)
    }
  }

  @Test("a shutdown off the loop after one on the loop returns and closes nothing")
  func shutdownOnThenOffTheLoop() async {
    await #expect(processExitsWith: .success) {
      let loop = EventLoop(name: "EventLoopShutdownTests-on-off")
      let stopped = PosixMutex(false)
      loop.execute {
        loop.shutdown()
        stopped.withLock { $0 = true }
      }
      let deadline = MonotonicInstant.now.advanced(by: .seconds(10))
      while !stopped.withLock({ $0 }) {
        guard MonotonicInstant.now < deadline else { exit(2) }
        sched_yield()
      }
      // The loop's thread ends by itself and closes its descriptors; a shutdown from here
      // must neither join that detached thread nor close anything again.
      loop.shutdown()
      let pipes = EventLoopShutdownTests.openPipes()
      loop.shutdown()
      exit(EventLoopShutdownTests.allOpen(pipes) ? 0 : 1)
    }
  }

  @Test("shutdown closes the loop's epoll descriptor and eventfd")
  func shutdownClosesDescriptors() async {
    await #expect(processExitsWith: .success) {
      let loop = EventLoop(name: "EventLoopShutdownTests-fds")
      let fds = [loop.epollFD, loop.wakeFD]
      guard EventLoopShutdownTests.allOpen(fds) else { exit(2) }
      loop.shutdown()
      exit(fds.allSatisfy { fcntl($0, F_GETFD) == -1 && errno == EBADF } ? 0 : 1)
    }
  }

  static func openPipes() -> [Int32] {
    var fds: [Int32] = []
    for _ in 0..<4 {
      var pair: [Int32] = [-1, -1]
      guard pipe(&pair) == 0 else { exit(3) }
      fds += pair
    }
    return fds
  }

  static func allOpen(_ fds: [Int32]) -> Bool {
    fds.allSatisfy { fcntl($0, F_GETFD) != -1 }
  }
}
