import Glibc
import Testing

@testable import GRPCWire

/// The loop's end-of-step flushes are bounded per poll, not per ready socket: a writer that
/// asks for another flush at every flush (an endless stream to a client that keeps reading)
/// gets at most ``EventLoop/flushRounds`` of them between two polls, however many sockets a
/// poll finds ready — else every ready socket multiplied the writing between polls, and a new
/// connection, a reset or a WINDOW_UPDATE waited seconds to be read.
@Suite("Event loop flush rounds", .timeLimit(.minutes(1)))
struct EventLoopFlushRoundsTests {
  @Test(
    "between two polls, at most flushRounds end-of-step flushes, with 1, 4 and 8 sockets ready",
    arguments: [1, 4, 8])
  func flushRoundsPerPoll(readySockets: Int) async throws {
    let loop = EventLoop(name: "test-flush-rounds")
    defer { loop.shutdown() }
    let probe = PollProbe(loop: loop, polls: 50)
    // Pipes holding a byte nobody reads: their read ends are ready at every poll.
    var pipes: [[Int32]] = []
    defer { for pair in pipes { for fd in pair { close(fd) } } }
    for _ in 0..<readySockets {
      var pair: [Int32] = [-1, -1]
      try #require(pipe(&pair) == 0)
      pipes.append(pair)
      var byte: UInt8 = 1
      try #require(write(pair[1], &byte, 1) == 1)
    }
    let fds = pipes.map { $0[0] }
    let rounds = await withCheckedContinuation { (done: CheckedContinuation<[Int], Never>) in
      loop.execute {
        probe.done = done
        // The first socket marks the polls; the others only make them busier.
        loop.register(fds[0], .read, probe)
        for fd in fds.dropFirst() { loop.register(fd, .read, ReadyIgnored()) }
        loop.runAtEndOfTick(probe)
      }
    }
    await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
      loop.execute {
        for fd in fds { loop.unregister(fd) }
        stopped.resume()
      }
    }
    #expect(rounds.count == 50)
    #expect(
      rounds.allSatisfy { $0 <= EventLoop.flushRounds },
      "flushes between two polls: \(rounds) (at most \(EventLoop.flushRounds))")
    // The writer is not starved either: it flushes at every poll.
    #expect(rounds.allSatisfy { $0 >= 1 }, "flushes between two polls: \(rounds)")
  }
}

/// A ready socket's handler and an endless writer: counts the flushes (``tickEnded()``, each
/// asking for the next) between two reports of its socket, which come once per poll. Loop only.
private final class PollProbe: EventHandler, TickEndHandler, @unchecked Sendable {
  // @unchecked Sendable: made on the test's task, then touched only on `loop`.
  let loop: EventLoop
  let polls: Int
  var done: CheckedContinuation<[Int], Never>?
  private var flushes = 0
  private var rounds: [Int] = []
  private var seenFirstPoll = false

  init(loop: EventLoop, polls: Int) {
    self.loop = loop
    self.polls = polls
  }

  func readable() {
    guard done != nil else { return }
    if seenFirstPoll { rounds.append(flushes) }
    seenFirstPoll = true
    flushes = 0
    if rounds.count == polls {
      done?.resume(returning: rounds)
      done = nil
    }
  }

  func tickEnded() {
    guard done != nil else { return }
    flushes += 1
    loop.runAtEndOfTick(self)
  }

  func writable() {}
  func loopClosing() {}
}

/// A ready socket the loop reports at every poll; nothing is read from it.
private final class ReadyIgnored: EventHandler {
  func readable() {}
  func writable() {}
  func loopClosing() {}
}
