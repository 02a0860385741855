import Testing

@testable import GRPCWire

/// The stream mailbox both roles keep under their stream's lock: received messages handed to
/// the reader in order with their flow-control credit returned in batches, and written bytes
/// handed to nghttp2 with writers held to their limit and a client's request kept for a replay.
@Suite("Stream mailbox")
struct StreamMailboxTests {
  typealias Message = StreamMessage
  typealias Mailbox = StreamMailbox

  /// Message `id` (its payload's first byte, so at most 255), owing `owed` bytes, with a
  /// payload of `size` bytes (at least 1).
  static func message(_ id: Int, owed: Int = 10, size: Int = 5) -> Message {
    let payload = [UInt8(id)] + [UInt8](repeating: 0, count: size - 1)
    return Message(
      frame: .init(compressed: false, payload: payload), encoding: .identity, owed: owed)
  }

  /// Copies what the data provider gives, `chunk` bytes at a time at most.
  static func read(_ mailbox: inout Mailbox, chunk: Int) -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: chunk)
    let count = buffer.withUnsafeMutableBytes { mailbox.readOutbound(into: $0).count }
    return Array(buffer[..<count])
  }

  // MARK: Received messages

  @Test("received messages come out in order, and the buffered payload follows them")
  func order() {
    var mailbox = Mailbox(outboundLimit: 1 << 20)
    let handed1 = mailbox.deliver([Self.message(1), Self.message(2, size: 7)])
    let handed2 = mailbox.deliver([Self.message(3)])
    #expect(handed1 == nil && handed2 == nil)
    #expect(mailbox.bufferedBytes == 17)
    var ids: [Int] = []
    while let (message, _) = mailbox.takeMessage() { ids.append(message.id) }
    #expect(ids == [1, 2, 3])
    #expect(mailbox.bufferedBytes == 0)
    #expect(!mailbox.hasMessage)
  }

  @Test("credit of messages taken goes back in one hop when the queue runs dry")
  func creditWhenDry() {
    var mailbox = Mailbox(outboundLimit: 1 << 20)
    _ = mailbox.deliver([Self.message(1, owed: 100), Self.message(2, owed: 50)])
    let taken1 = mailbox.takeMessage()
    #expect(taken1?.returnCredit == false)
    let taken2 = mailbox.takeMessage()
    #expect(taken2?.returnCredit == true)
    let credit9 = mailbox.takeCredit()
    #expect(credit9 == 150)
    let credit10 = mailbox.takeCredit()
    #expect(credit10 == 0)
  }

  @Test("while a credit hop is pending, further reads add to it and ask for no other")
  func oneHopPending() {
    var mailbox = Mailbox(outboundLimit: 1 << 20)
    _ = mailbox.deliver([Self.message(1, owed: 10)])
    let taken3 = mailbox.takeMessage()
    #expect(taken3?.returnCredit == true)
    _ = mailbox.deliver([Self.message(2, owed: 20)])
    let taken4 = mailbox.takeMessage()
    #expect(taken4?.returnCredit == false)
    let credit11 = mailbox.takeCredit()
    #expect(credit11 == 30)
    _ = mailbox.deliver([Self.message(3, owed: 5)])
    let taken5 = mailbox.takeMessage()
    #expect(taken5?.returnCredit == true)
  }

  @Test("a long queue returns credit once a batch is taken, before it runs dry")
  func creditBatch() {
    var mailbox = Mailbox(outboundLimit: 1 << 20)
    let owed = 1_000
    let count = Mailbox.creditBatch / owed + 10
    _ = mailbox.deliver((0..<count).map { Self.message($0, owed: owed) })
    var takenBeforeHop = 0
    while let (_, returnCredit) = mailbox.takeMessage() {
      takenBeforeHop += 1
      if returnCredit { break }
    }
    #expect(takenBeforeHop == (Mailbox.creditBatch + owed - 1) / owed)
    #expect(mailbox.hasMessage)
    let credit12 = mailbox.takeCredit()
    #expect(credit12 == takenBeforeHop * owed)
  }

  @Test("messages that owe nothing ask for no hop")
  func noCreditNoHop() {
    var mailbox = Mailbox(outboundLimit: 1 << 20)
    _ = mailbox.deliver([Self.message(1, owed: 0)])
    let taken6 = mailbox.takeMessage()
    #expect(taken6?.returnCredit == false)
  }

  @Test("a waiting reader gets the first message at once; the rest queue behind it")
  func waitingReader() async throws {
    let box = MailboxBox()
    let first = try await withCheckedThrowingContinuation {
      (c: CheckedContinuation<Message?, any Error>) in
      box.mailbox.readerWaiting = c
      let handed = box.mailbox.deliver([Self.message(1), Self.message(2), Self.message(3)])
      #expect(box.mailbox.readerWaiting == nil)
      handed?.reader.resume(returning: handed?.message)
      if handed == nil { c.resume(returning: nil) }
    }
    #expect(first?.id == 1)
    #expect(box.mailbox.bufferedBytes == 10)
    // The reader's message is acknowledged by the loop at once, not through the mailbox.
    let taken7 = box.mailbox.takeMessage()
    #expect(taken7?.message.id == 2)
    let taken8 = box.mailbox.takeMessage()
    #expect(taken8?.message.id == 3)
    let credit13 = box.mailbox.takeCredit()
    #expect(credit13 == 20)
  }

  @Test("removing the messages returns those not taken; taken credit stays")
  func removeMessages() {
    var mailbox = Mailbox(outboundLimit: 1 << 20)
    _ = mailbox.deliver([
      Self.message(1, owed: 7), Self.message(2, owed: 11), Self.message(3, owed: 13),
    ])
    _ = mailbox.takeMessage()
    let rest = mailbox.removeMessages()
    #expect(rest.map(\.id) == [2, 3])
    #expect(mailbox.bufferedBytes == 0 && !mailbox.hasMessage)
    let credit14 = mailbox.takeCredit()
    #expect(credit14 == 7)
  }

  // MARK: Bytes to send

  @Test("written bytes go out in order in chunks; the loop is told once per hop")
  func outboundChunks() {
    var mailbox = Mailbox(outboundLimit: 1 << 20)
    let written5t = mailbox.write(announce: true) { $0.append(contentsOf: [1, 2, 3, 4, 5]) }
    #expect(written5t.count == 5 && written5t.tellLoop == true)
    let written2f = mailbox.write(announce: true) { $0.append(contentsOf: [6, 7]) }
    #expect(written2f.count == 2 && written2f.tellLoop == false)
    #expect(mailbox.unsentCount == 7)
    let first = Self.read(&mailbox, chunk: 3)
    #expect(first == [1, 2, 3])
    let read15 = Self.read(&mailbox, chunk: 10)
    #expect(read15 == [4, 5, 6, 7])
    #expect(mailbox.unsentCount == 0)
    let read16 = Self.read(&mailbox, chunk: 10)
    #expect(read16 == [])
    mailbox.resumeHopRan()
    let written1t = mailbox.write(announce: true) { $0.append(9) }
    #expect(written1t.count == 1 && written1t.tellLoop == true)
    let written1f = mailbox.write(announce: false) { $0.append(10) }
    #expect(written1f.count == 1 && written1f.tellLoop == false)
    let answer21 = mailbox.claimResumeHop()
    #expect(!answer21)
    mailbox.resumeHopRan()
    let answer22 = mailbox.claimResumeHop()
    #expect(answer22)
  }

  /// The one data provider's pull, for both roles: `finished` is a request half-closed or
  /// a handler's status set.
  @Test("a pull defers an open empty queue; the pull that empties a finished one is the last")
  func pulls() {
    var mailbox = Mailbox(outboundLimit: 1 << 20)
    var buffer = [UInt8](repeating: 0, count: 4)
    func pull(finished: Bool) -> BodyPull {
      buffer.withUnsafeMutableBytes { mailbox.pull(into: $0, finished: finished).0 }
    }
    #expect(pull(finished: false) == .deferred)
    _ = mailbox.write(announce: false) { $0.append(contentsOf: [1, 2, 3, 4, 5, 6]) }
    #expect(pull(finished: true) == .bytes(4, last: false))
    #expect(buffer == [1, 2, 3, 4])
    // Not finished: the queue's end is no body's end.
    #expect(pull(finished: false) == .bytes(2, last: false))
    #expect(pull(finished: false) == .deferred)
    _ = mailbox.write(announce: false) { $0.append(contentsOf: [7, 8]) }
    #expect(pull(finished: true) == .bytes(2, last: true))
    #expect(buffer[..<2] == [7, 8])
    // Finished with nothing queued: an empty last pull (a response's trailers are then due).
    #expect(pull(finished: true) == .bytes(0, last: true))
  }

  @Test("a write that throws leaves the queue as it was")
  func failedWrite() {
    struct Refused: Error {}
    var mailbox = Mailbox(outboundLimit: 1 << 20)
    _ = mailbox.write(announce: false) { $0.append(contentsOf: [1, 2]) }
    #expect(throws: Refused.self) {
      try mailbox.write(announce: true) { bytes throws(Refused) in
        bytes.append(contentsOf: [3, 4, 5])
        throw Refused()
      }
    }
    #expect(mailbox.unsentCount == 2)
    let read17 = Self.read(&mailbox, chunk: 10)
    #expect(read17 == [1, 2])
    let answer23 = mailbox.claimResumeHop()
    #expect(answer23)
  }

  @Test("a client's request is kept for a replay until committed")
  func replay() {
    var mailbox = Mailbox(outbound: [1, 2, 3], keepsSentBytes: true, outboundLimit: 1 << 20)
    let read18 = Self.read(&mailbox, chunk: 10)
    #expect(read18 == [1, 2, 3])
    #expect(mailbox.unsentCount == 0)
    let answer24 = mailbox.rewindForReplay()
    #expect(answer24)
    let read19 = Self.read(&mailbox, chunk: 2)
    #expect(read19 == [1, 2])
    let answer25 = mailbox.rewindForReplay()
    #expect(answer25)
    let read20 = Self.read(&mailbox, chunk: 10)
    #expect(read20 == [1, 2, 3])
    mailbox.commit()
    #expect(!mailbox.keepsSentBytes)
    let answer26 = mailbox.rewindForReplay()
    #expect(!answer26)
    #expect(mailbox.unsentCount == 0)
  }

  @Test("past the replay limit the request is committed and sent bytes go")
  func replayLimit() {
    let size = Mailbox.replayLimit + 10
    var mailbox = Mailbox(
      outbound: [UInt8](repeating: 7, count: size), keepsSentBytes: true, outboundLimit: 1 << 20)
    var sent = 0
    while mailbox.unsentCount > 0 { sent += Self.read(&mailbox, chunk: 16_384).count }
    #expect(sent == size)
    #expect(!mailbox.keepsSentBytes)
    let answer27 = mailbox.rewindForReplay()
    #expect(!answer27)
  }

  @Test("a writer above its limit waits, and is resumed once the queue is down to it")
  func writerLimit() async throws {
    let box = MailboxBox(outboundLimit: 8)
    _ = box.mailbox.write(announce: false) { $0.append(contentsOf: [UInt8](repeating: 1, count: 20)) }
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
      let kept = box.mailbox.wait(writer: c, limit: 8)
      #expect(kept)
      var buffer = [UInt8](repeating: 0, count: 5)
      // 15 left: still above the limit.
      let early = buffer.withUnsafeMutableBytes { box.mailbox.readOutbound(into: $0) }
      #expect(early.count == 5 && early.writer == nil)
      buffer = [UInt8](repeating: 0, count: 7)
      // 8 left: at the limit, the writer goes on.
      let late = buffer.withUnsafeMutableBytes { box.mailbox.readOutbound(into: $0) }
      #expect(late.count == 7 && late.writer != nil)
      late.writer?.resume()
      if late.writer == nil { c.resume() }
    }
    #expect(box.mailbox.unsentCount == 8)
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
      // At or under the limit a writer is not kept: it goes on at once.
      let kept = box.mailbox.wait(writer: c, limit: 8)
      #expect(!kept)
      if !kept { c.resume() }
    }
  }

  @Test("removing what is unsent says how much never went; the waiters are handed back")
  func removeUnsent() async throws {
    let box = MailboxBox()
    _ = box.mailbox.write(announce: false) { $0.append(contentsOf: [1, 2, 3, 4]) }
    _ = Self.read(&box.mailbox, chunk: 1)
    let unsent = box.mailbox.removeUnsent()
    #expect(unsent == 3)
    #expect(box.mailbox.unsentCount == 0)
    let ended = try await withCheckedThrowingContinuation {
      (c: CheckedContinuation<Message?, any Error>) in
      box.mailbox.readerWaiting = c
      let (reader, writer) = box.mailbox.removeWaiters()
      #expect(writer == nil && box.mailbox.readerWaiting == nil)
      reader?.resume(returning: Self.message(42))
    }
    #expect(ended?.id == 42)
  }
}

/// A mailbox a continuation's closure can reach (tests only: one task touches it).
private final class MailboxBox: @unchecked Sendable {
  var mailbox: StreamMailbox
  init(outboundLimit: Int = 1 << 20) {
    mailbox = StreamMailbox(outboundLimit: outboundLimit)
  }
}

extension StreamMessage {
  /// The message's number in these tests (``StreamMailboxTests/message(_:owed:size:)``).
  fileprivate var id: Int { Int(frame.payload[0]) }
}
