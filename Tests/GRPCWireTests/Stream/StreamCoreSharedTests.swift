import Testing

@testable import GRPCWire

/// What both roles' streams do alike, written once on the core and its mailbox
/// (`StreamCore+Shared`): a reader's credit acknowledged, the body pulled, the waiters ended,
/// what is owed released. A role that only records what it is asked to acknowledge stands in
/// for the client's and the server's stream; everything runs on its loop, as it must.
///
/// A continuation a regression never resumes fails the suite at its time limit instead of
/// hanging the run.
@Suite("Stream core: what both roles do alike", .timeLimit(.minutes(1)))
struct StreamCoreSharedTests {
  static func message(owed: Int) -> StreamMessage {
    StreamMessage(frame: .init(compressed: false, payload: [0]), encoding: .identity, owed: owed)
  }

  final class Role: StreamCore, @unchecked Sendable {
    // @unchecked Sendable: touched on `loop` only (the tests run their bodies there).
    var finished = false
    var ended = 0
    /// What the role was asked to acknowledge, in order: bytes, and whether for the stream.
    var acknowledged: [(count: Int, streamOpen: Bool)] = []
    /// What ``bodyEnding()`` read, under the lock, for the pull that ended the body.
    var ending: String?

    init(loop: EventLoop) {
      super.init(
        loop: loop, id: 1, machine: .client(), maxReceiveSize: 1 << 20,
        outboundLimit: 1 << 20, loopConfined: true)
    }

    override var outboundFinished: Bool { finished }
    override func bodyEnding() { ending = "trailers \(ended)" }

    override func acknowledge(_ count: Int, streamOpen: Bool) {
      acknowledged.append((count, streamOpen))
    }
  }

  /// Runs `body` on a fresh loop, with a role of it.
  static func onLoop<T: Sendable>(_ body: @escaping @Sendable (Role) -> T) async -> T {
    let loop = EventLoop(name: "StreamRoleTests")
    defer { loop.shutdown() }
    let role = Role(loop: loop)
    return await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
      loop.execute { c.resume(returning: body(role)) }
    }
  }

  @Test("taken on the loop: for the stream while open, the connection once closed, none released")
  func readerTook() async {
    let acknowledged = await Self.onLoop { role in
      role.owe(10)
      role.readerTook(4)
      role.machine.close()
      role.readerTook(3)
      role.releaseOwed()
      role.readerTook(2)
      return role.acknowledged.map { "\($0.count) \($0.streamOpen)" }
    }
    #expect(acknowledged == ["4 true", "3 false", "3 false"])
  }

  @Test("what readers took from the mailbox is acknowledged in one go when the hop runs")
  func readCreditInOneGo() async {
    let (claimed, acknowledged) = await Self.onLoop { role in
      role.owe(12)
      _ = role.mailbox.deliver([Self.message(owed: 5), Self.message(owed: 7)])
      let first = role.mailbox.takeMessage()
      let second = role.mailbox.takeMessage()
      role.acknowledgeReadCredit()
      role.acknowledgeReadCredit()
      return (
        [first?.returnCredit, second?.returnCredit],
        role.acknowledged.map { "\($0.count) \($0.streamOpen)" }
      )
    }
    // The queue ran dry with the second: one hop, for both messages' bytes.
    #expect(claimed == [false, true])
    #expect(acknowledged == ["12 true"])
  }

  @Test("an empty queue defers the body; queued bytes come, the last with what follows it")
  func pullQueued() async {
    let pulls = await Self.onLoop { role -> [String] in
      var resume: [CheckedContinuation<Void, any Error>] = []
      var buffer = [UInt8](repeating: 0, count: 16)
      return buffer.withUnsafeMutableBytes { buffer in
        var seen: [String] = []
        let deferred = role.pullBody(into: buffer, resume: &resume)
        seen.append("\(deferred) \(role.ending ?? "-") \(role.bodyDeferred)")
        _ = role.mailbox.write(announce: false) { $0.append(contentsOf: [1, 2, 3]) }
        let some = role.pullBody(into: buffer, resume: &resume)
        seen.append("\(some) \(role.ending ?? "-")")
        _ = role.mailbox.write(announce: false) { $0.append(contentsOf: [4, 5]) }
        role.finished = true
        let last = role.pullBody(into: buffer, resume: &resume)
        seen.append("\(last) \(role.ending ?? "-")")
        return seen
      }
    }
    #expect(
      pulls == [
        "deferred - true", "bytes(3, last: false) -", "bytes(2, last: true) trailers 0",
      ])
  }

  @Test("the end settles, resumes the waiting reader with no message, stops the deadline")
  func endAfterSuccess() async throws {
    let loop = EventLoop(name: "StreamRoleTests-end")
    defer { loop.shutdown() }
    let role = Role(loop: loop)
    let message = try await withCheckedThrowingContinuation {
      (c: CheckedContinuation<StreamMessage?, any Error>) in
      loop.execute {
        role.deadlineTimer = loop.scheduleTimer(at: .now.advanced(by: .seconds(60))) {}
        role.mailbox.readerWaiting = c
        let settled = role.end(nil) { () -> Int in
          role.ended += 1
          return role.ended
        }
        #expect(settled == 1)
        #expect(role.deadlineTimer == nil)
      }
    }
    #expect(message == nil)
  }

  @Test("an end with an error throws it to the waiting reader")
  func endWithError() async {
    let loop = EventLoop(name: "StreamRoleTests-error")
    defer { loop.shutdown() }
    let role = Role(loop: loop)
    let error = RPCError(code: .cancelled, message: "the client reset the stream")
    await #expect(throws: error) {
      _ = try await withCheckedThrowingContinuation {
        (c: CheckedContinuation<StreamMessage?, any Error>) in
        loop.execute {
          role.mailbox.readerWaiting = c
          role.end(error) {}
        }
      }
    }
  }
}
