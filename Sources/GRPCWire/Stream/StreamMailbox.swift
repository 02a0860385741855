/// A complete message received on a stream, waiting in its ``StreamMailbox`` for its reader
/// (a client's caller or a server's handler), and what it owes the peer's flow-control
/// windows until its reader takes it.
struct StreamMessage {
  var frame: MessageDeframer.Frame
  /// How its payload is compressed, if its flag says it is (the `grpc-encoding` its stream
  /// was sent with).
  var encoding: StreamStateMachine.MessageEncoding
  /// Received bytes of this message not yet acknowledged (consumed) to the peer: those that
  /// arrived in the chunk that completed it (those of earlier chunks were acknowledged as they
  /// came, to let the rest of a large message in).
  var owed: Int
  /// Payload bytes, for ``StreamMailbox/bufferedBytes``.
  var payloadCount: Int { frame.payload.count }
  /// What a slot holds once its message was taken: nothing, so the payload is let go at once.
  static var taken: Self {
    Self(frame: .init(compressed: false, payload: []), encoding: .identity, owed: 0)
  }
}

/// The queues of one HTTP/2 stream, for either role: the messages received for the reader
/// (the caller's task on a client, the handler on a server) and the framed bytes written for
/// nghttp2's data provider, with the flow-control accounting between them.
///
/// A value kept under its stream's lock; the loop and the stream's task both reach it there.
/// It decides, and returns what to resume or to hand back to the loop; the owner resumes
/// continuations and acknowledges bytes after releasing the lock.
///
/// Receive flow control: a message's bytes stay unacknowledged (``StreamMessage/owed``)
/// until the reader takes it, so a slow reader holds at most a stream window of messages.
/// What readers take is returned to the loop in batches — one hop per ``creditBatch`` bytes
/// or when the queue runs dry, not one per message.
///
/// Send flow control: a writer suspends while more than its limit waits unsent; the data
/// provider resumes it once nghttp2 has taken the queue down to that limit. On a client the
/// bytes sent stay queued until the call is committed, so that a call the server never
/// processed can be sent again whole (gRPC's transparent retry).
struct StreamMailbox {
  // Not generic: both roles keep ``StreamMessage``s. A generic mailbox held in a class was
  // copied and destroyed through its generic value witnesses, which look up the metadata of
  // its continuations' types in the runtime's cache on every call (perf: ~2 % of a GetTrip).
  typealias Message = StreamMessage

  // MARK: Inbound

  private var inbound: [Message] = []
  private var inboundHead = 0
  /// Payload bytes of received messages not yet taken.
  private(set) var bufferedBytes = 0
  /// Bytes of messages taken and not yet acknowledged by the loop.
  private var creditToReturn = 0
  /// A hop to the loop that acknowledges `creditToReturn` is queued: readers add to it
  /// meanwhile.
  private var creditScheduled = false
  /// A reader suspended for the next message.
  var readerWaiting: CheckedContinuation<Message?, any Error>?

  /// Returned read credit is batched up to this before it costs a hop to the loop.
  static var creditBatch: Int { 64 << 10 }

  // MARK: Outbound

  private var outbound: [UInt8]
  private var outboundOffset = 0
  /// Sent bytes are kept for a replay (a client's request before the call is committed).
  private(set) var keepsSentBytes: Bool
  /// Above this much unsent, the queue's sent prefix is cut off as it goes, and the writer
  /// waits.
  let outboundLimit: Int
  /// A writer suspended until at most `writerLimit` bytes wait unsent.
  private var writerWaiting: CheckedContinuation<Void, any Error>?
  private var writerLimit = 0
  /// A hop to the loop that resumes nghttp2's data provider is queued.
  private var resumeScheduled = false

  /// Sent bytes kept for a replay, at most: past this the request is committed.
  static var replayLimit: Int { 4 << 20 }

  /// A mailbox whose outbound queue starts with `outbound` (a client's first request), keeps
  /// sent bytes for a replay when `keepsSentBytes`, and lets writers queue up to
  /// `outboundLimit` bytes.
  init(outbound: [UInt8] = [], keepsSentBytes: Bool = false, outboundLimit: Int) {
    self.outbound = outbound
    self.keepsSentBytes = keepsSentBytes
    self.outboundLimit = outboundLimit
  }

  // MARK: Received messages

  /// Hands `message` to the waiting reader or the queue.
  mutating func deliver(_ message: Message) -> (
    reader: CheckedContinuation<Message?, any Error>, message: Message
  )? {
    if let reader = readerWaiting {
      // A waiting reader means an empty queue: the message is its.
      readerWaiting = nil
      return (reader, message)
    }
    bufferedBytes += message.payloadCount
    inbound.append(message)
    return nil
  }

  /// Hands `messages`, received in order, to the waiting reader or the queue. Returns the
  /// reader with the message it is given: the loop acknowledges that message's bytes at once.
  mutating func deliver(_ messages: [Message]) -> (
    reader: CheckedContinuation<Message?, any Error>, message: Message
  )? {
    // Only the first can be handed over: the reader is gone after it.
    var handed: (reader: CheckedContinuation<Message?, any Error>, message: Message)? = nil
    for message in messages {
      if let reader = deliver(message) { handed = reader }
    }
    return handed
  }

  /// Whether a received message waits to be taken.
  var hasMessage: Bool { inboundHead < inbound.count }

  /// The next received message, if one waits, and whether read credit is now due back to the
  /// loop (the caller then queues ``takeCredit()`` there; at most one such hop is pending).
  mutating func takeMessage() -> (message: Message, returnCredit: Bool)? {
    guard inboundHead < inbound.count else { return nil }
    let message = inbound[inboundHead]
    inbound[inboundHead] = .taken
    inboundHead += 1
    bufferedBytes -= message.payloadCount
    if inboundHead == inbound.count {
      inbound.removeAll(keepingCapacity: true)
      inboundHead = 0
    }
    creditToReturn += message.owed
    var returnCredit = false
    if !creditScheduled && creditToReturn > 0
      && (creditToReturn >= Self.creditBatch || inbound.isEmpty)
    {
      creditScheduled = true
      returnCredit = true
    }
    return (message, returnCredit)
  }

  /// On the loop, in the hop ``takeMessage()`` asked for: the bytes to acknowledge.
  mutating func takeCredit() -> Int {
    creditScheduled = false
    defer { creditToReturn = 0 }
    return creditToReturn
  }

  /// Empties the inbound queue and returns the messages not taken; what they owe is the
  /// stream core's account. Credit for messages already taken stays for ``takeCredit()``.
  @discardableResult mutating func removeMessages() -> [Message] {
    let rest = inboundHead == 0 ? inbound : Array(inbound[inboundHead...])
    inbound = []
    inboundHead = 0
    bufferedBytes = 0
    return rest
  }

  // MARK: Bytes to send

  /// Bytes written and not yet taken by nghttp2.
  var unsentCount: Int { outbound.count - outboundOffset }

  /// Appends framed bytes through `body`, which appends to the queue in place (serialising
  /// straight into it); what it appended is taken back if it throws. Returns how many bytes
  /// it appended and whether the loop must be told (no hop to resume the data provider is
  /// queued yet; with `announce` false the caller needs none and none is claimed).
  mutating func write<E: Error>(
    announce: Bool, _ body: (inout [UInt8]) throws(E) -> Void
  ) throws(E) -> (count: Int, tellLoop: Bool) {
    let start = outbound.count
    do {
      try body(&outbound)
    } catch {
      outbound.removeSubrange(start...)
      throw error
    }
    var tellLoop = false
    if announce && !resumeScheduled {
      resumeScheduled = true
      tellLoop = true
    }
    return (outbound.count - start, tellLoop)
  }

  /// Claims the hop that resumes the data provider: true when none is queued yet (then the
  /// caller queues it).
  mutating func claimResumeHop() -> Bool {
    defer { resumeScheduled = true }
    return !resumeScheduled
  }

  /// On the loop, in the hop ``write(announce:_:)`` or ``claimResumeHop()`` asked for.
  mutating func resumeHopRan() { resumeScheduled = false }

  /// Suspends `writer` until at most `limit` bytes wait unsent; false (nothing kept) when
  /// that is already so.
  mutating func wait(writer: CheckedContinuation<Void, any Error>, limit: Int) -> Bool {
    guard unsentCount > limit else { return false }
    writerWaiting = writer
    writerLimit = limit
    return true
  }

  /// nghttp2's data provider: copies queued bytes into `buffer`. Returns how many, and the
  /// writer to resume now that the queue is down to its limit.
  mutating func readOutbound(into buffer: UnsafeMutableRawBufferPointer) -> (
    count: Int, writer: CheckedContinuation<Void, any Error>?
  ) {
    let count = min(unsentCount, buffer.count)
    guard count > 0 else { return (0, nil) }
    outbound.withUnsafeBytes { source in
      buffer.baseAddress!.copyMemory(from: source.baseAddress! + outboundOffset, byteCount: count)
    }
    outboundOffset += count
    if keepsSentBytes && outboundOffset > Self.replayLimit { keepsSentBytes = false }
    if !keepsSentBytes {
      if outboundOffset == outbound.count {
        // A queue grown past a megabyte by a burst is let go; an ordinary one is reused.
        outbound.removeAll(keepingCapacity: outbound.capacity <= 1 << 20)
        outboundOffset = 0
      } else if outboundOffset > outboundLimit {
        outbound.removeSubrange(..<outboundOffset)
        outboundOffset = 0
      }
    }
    var writer: CheckedContinuation<Void, any Error>? = nil
    if writerWaiting != nil, unsentCount <= writerLimit {
      writer = writerWaiting
      writerWaiting = nil
    }
    return (count, writer)
  }

  /// nghttp2's data provider, for either role: copies queued bytes into `buffer`. `finished`
  /// says nothing more will be queued (a request stream half-closed, a handler's status set):
  /// then the pull that leaves the queue empty is the body's last. Returns the pull and the
  /// writer to resume now that the queue is down to its limit.
  mutating func pull(into buffer: UnsafeMutableRawBufferPointer, finished: Bool) -> (
    BodyPull, writer: CheckedContinuation<Void, any Error>?
  ) {
    guard unsentCount > 0 else { return (finished ? .bytes(0, last: true) : .deferred, nil) }
    let (count, writer) = readOutbound(into: buffer)
    return (.bytes(count, last: finished && unsentCount == 0), writer)
  }

  /// The call is committed (a client got response headers): sent bytes are no longer kept,
  /// and a request sent whole lets them go now rather than with the stream.
  mutating func commit() {
    keepsSentBytes = false
    if outboundOffset == outbound.count {
      outbound = []
      outboundOffset = 0
    }
  }

  /// Rewinds the queue to its first byte for a replay; false when sent bytes were not kept.
  mutating func rewindForReplay() -> Bool {
    guard keepsSentBytes else { return false }
    outboundOffset = 0
    return true
  }

  /// Empties the outbound side; returns how many bytes were never sent.
  mutating func removeUnsent() -> Int {
    defer {
      outbound = []
      outboundOffset = 0
    }
    return unsentCount
  }

  /// The call ended: the continuations still waiting, which the caller resumes with its end.
  mutating func removeWaiters() -> (
    reader: CheckedContinuation<Message?, any Error>?, writer: CheckedContinuation<Void, any Error>?
  ) {
    defer {
      readerWaiting = nil
      writerWaiting = nil
    }
    return (readerWaiting, writerWaiting)
  }
}
