/// What one HTTP/2 stream does the same way in both roles, held by the role's stream
/// (``ClientStream``: a call; ``ServerStream``: a request to a handler), which adds its policy:
/// whom it hands messages to, what a failure means, and how the connection is told.
///
/// Loop-only, a value inside its stream. It decides and returns what to do; the stream does
/// it (acknowledges bytes to its connection, resumes its reader). So far it holds the inbound
/// hand-off: a stream's DATA deframed into complete messages, with the flow-control bytes that
/// are acknowledged at once, and the account of those its messages still owe until their
/// reader takes them. (Issue 33 moves the two roles' other mirrored pairs here one at a
/// time: outbound queue, abort, finish.)
struct StreamCore {
  /// Received DATA in, complete messages out.
  var deframer: MessageDeframer
  /// Receive-window bytes of complete messages handed on and not yet acknowledged: each
  /// message's share is acknowledged as its reader takes it, and what is left as the stream
  /// closes (for the connection only, then).
  private(set) var owedBytes = 0

  /// A core whose messages may be at most `maxReceiveSize` bytes.
  init(maxReceiveSize: Int) {
    deframer = MessageDeframer(maxMessageSize: maxReceiveSize)
  }

  /// What one chunk of DATA brought.
  struct Inbound<Message> {
    /// The first message it completed; a chunk nearly always completes exactly one, so the
    /// common case makes no list.
    var first: Message?
    /// The messages after `first`, in order.
    var more: [Message] = []
    /// The chunk's bytes that belong to a message still arriving: acknowledged at once, since
    /// that message cannot complete otherwise (its size is bounded by the receive limit).
    var partialBytes: Int
    /// The chunk's bytes that belong to the messages it completed: each message owes its
    /// share until its reader takes it, so a slow reader holds at most a window of them.
    var owedByMessages: Int
  }

  /// Deframes `bytes`, one chunk of the stream's DATA, making each complete message with
  /// `message` (its frame, and the bytes of it this chunk brought: what it owes). When it
  /// throws, nothing of the chunk is handed on: the stream fails.
  mutating func receive<Message>(
    _ bytes: UnsafeRawBufferPointer,
    as message: (MessageDeframer.Frame, _ owed: Int) -> Message
  ) throws(MessageDeframer.Failure) -> Inbound<Message> {
    var first: Message? = nil
    var more: [Message] = []
    let partialBytes = try deframer.append(bytes) { frame, owed in
      let made = message(frame, owed)
      if first == nil { first = made } else { more.append(made) }
    }
    return Inbound(
      first: first, more: more, partialBytes: partialBytes,
      owedByMessages: bytes.count - partialBytes)
  }

  /// Messages whose bytes come to `count` were handed on (``Inbound/owedByMessages``): they
  /// owe them until their reader takes them.
  mutating func owe(_ count: Int) {
    owedBytes += count
  }

  /// Readers took messages owing `count` bytes, which the stream now acknowledges.
  mutating func acknowledged(_ count: Int) {
    owedBytes -= count
  }

  /// The stream is over (or starts over): every byte still owed, which the stream
  /// acknowledges for the connection only; nothing is owed afterwards.
  mutating func releaseOwed() -> Int {
    defer { owedBytes = 0 }
    return owedBytes
  }
}
