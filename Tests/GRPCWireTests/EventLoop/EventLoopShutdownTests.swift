import FleetSync
import Foundation
import Glibc
import Testing

@testable import GRPCWire

/// ``EventLoop/shutdown()`` closes the loop's descriptors, and acts once: a second call — a
/// `defer` beside an owner's own shutdown — neither joins an ended thread again nor closes
/// descriptor numbers the process has handed to someone else since. Each case runs in an
/// exit test's own process, where no other test opens descriptors, so the numbers the loop
/// freed are the next ones given out, and the ones it opened are the only new ones of
/// their kinds.
@Suite("Event loop shutdown", .timeLimit(.minutes(1)))
struct EventLoopShutdownTests {
  @Test("a second shutdown off the loop returns and closes nobody else's descriptors")
  func secondShutdownOffTheLoop() async {
    await #expect(processExitsWith: .success) {
      let loop = EventLoop(name: "EventLoopShutdownTests-twice")
      loop.shutdown()
      EventLoopShutdownTests.shutdownAgainClosesNothing(loop)
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
      EventLoopShutdownTests.shutdownAgainClosesNothing(loop)
    }
  }

  @Test("shutdown closes the loop's epoll descriptor and eventfd")
  func shutdownClosesDescriptors() async {
    await #expect(processExitsWith: .success) {
      let before = EventLoopShutdownTests.openDescriptors()
      let loop = EventLoop(name: "EventLoopShutdownTests-fds")
      // The loop's two: an epoll instance and an eventfd, new since it was made. (Not every
      // new descriptor: the process's own threads may open some meanwhile, a timerfd.)
      let new = EventLoopShutdownTests.openDescriptors().subtracting(before)
      var opened: [Int32: String] = [:]
      for fd in new {
        let kind = EventLoopShutdownTests.kind(of: fd)
        if kind.hasSuffix("[eventpoll]") || kind.hasSuffix("[eventfd]") { opened[fd] = kind }
      }
      guard opened.values.sorted() == ["anon_inode:[eventfd]", "anon_inode:[eventpoll]"] else {
        exit(2)
      }
      loop.shutdown()
      // Closed: no longer of their kinds (a number given out again since would be another
      // thread's timerfd).
      exit(opened.allSatisfy { EventLoopShutdownTests.kind(of: $0.key) != $0.value } ? 0 : 1)
    }
  }

  /// The wake-up of a stopped loop went to its eventfd's number: 8 bytes into whatever
  /// descriptor had been given that number since.
  @Test("work handed to a stopped loop is refused, and nothing is written to its old numbers")
  func executeAfterShutdown() async {
    await #expect(processExitsWith: .success) {
      let loop = EventLoop(name: "EventLoopShutdownTests-refused")
      loop.shutdown()
      let pipes = EventLoopShutdownTests.openPipes()
      let queued = loop.execute { exit(3) }
      // Pairs are (read, write): the write end of one took the eventfd's number.
      let unread = stride(from: 0, to: pipes.count, by: 2).map { index -> Int32 in
        var count: Int32 = 0
        _ = ioctl(pipes[index], UInt(FIONREAD), &count)
        return count
      }
      exit(!queued && unread.allSatisfy { $0 == 0 } ? 0 : 1)
    }
  }

  /// In an exit test's process: the loop's descriptors are closed and pipes take their
  /// numbers; one more shutdown must leave the pipes open. Exits with the answer.
  static func shutdownAgainClosesNothing(_ loop: EventLoop) -> Never {
    let pipes = openPipes()
    loop.shutdown()
    exit(pipes.allSatisfy { fcntl($0, F_GETFD) != -1 } ? 0 : 1)
  }

  /// Four pipes, read end then write end each: in an exit test's process, the first take the
  /// numbers a stopped loop freed.
  static func openPipes() -> [Int32] {
    var pipes: [Int32] = []
    for _ in 0..<4 {
      var pair: [Int32] = [-1, -1]
      guard pipe(&pair) == 0 else { exit(3) }
      pipes += pair
    }
    return pipes
  }

  /// The descriptors open in this process (`/proc/self/fd`, less the one reading it).
  static func openDescriptors() -> Set<Int32> {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return Set(entries.compactMap(Int32.init).filter { fcntl($0, F_GETFD) != -1 })
  }

  /// What descriptor `fd` is, as `/proc/self/fd` links name it (`anon_inode:[eventfd]`).
  static func kind(of fd: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
    guard count > 0 else { return "?" }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
