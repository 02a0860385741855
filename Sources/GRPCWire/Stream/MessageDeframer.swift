/// Splits a stream's DATA bytes into gRPC messages: a 1-byte compressed flag, a 4-byte
/// big-endian length, then the message (PROTOCOL-HTTP2.md, "Length-Prefixed-Message").
///
/// Lives on the loop with its stream. A message longer than `maxMessageSize` is refused as soon
/// as its prefix arrives, before any of it is buffered.
///
/// Holds nothing between messages: a stream may stay open for hours after its last message,
/// and a buffer kept at the size of the last split one would stay as long (with 10,000
/// long-lived server streams open, one in twenty had its first message split across reads).
struct MessageDeframer {
  /// One complete message as it was on the wire.
  struct Frame {
    var compressed: Bool
    var payload: [UInt8]
    /// Prefix plus payload: what it cost of the flow-control window.
    var wireSize: Int { 5 + payload.count }
  }

  enum Failure: Error, Equatable {
    /// The prefix announced more than the limit.
    case tooLarge(announced: Int, limit: Int)
    /// The flag byte was neither 0 nor 1.
    case badFlag(UInt8)
  }

  let maxMessageSize: Int
  /// Bytes of the unfinished message received so far, prefix included; 0 between messages.
  private var unfinishedCount = 0
  /// The unfinished message's prefix bytes, big-endian, as far as they have arrived.
  private var prefix: UInt64 = 0
  /// The unfinished message's payload so far. Handed over as the frame's payload when the
  /// message completes, so it is neither copied again nor kept.
  private var payload: [UInt8] = []

  init(maxMessageSize: Int) {
    self.maxMessageSize = maxMessageSize
  }

  /// Bytes received that are not yet part of a complete message.
  var bufferedByteCount: Int { unfinishedCount }

  /// Adds `bytes` and returns the messages they complete, in order.
  mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [Frame] {
    var frames: [Frame] = []
    _ = try append(bytes) { frame, _ in frames.append(frame) }
    return frames
  }

  /// Adds `bytes` and calls `body` with each message they complete, in order, and what the
  /// message owes back to the peer's flow-control window: its bytes on the wire, less those
  /// that arrived in earlier reads (acknowledged then). Returns the bytes of `bytes` left in
  /// the message still arriving, to acknowledge now so that a message larger than the
  /// window can complete. A receiver acknowledges a complete message only when its reader
  /// takes it (client and server alike).
  ///
  /// Messages whole in `bytes` (the common case: DATA frames hold whole messages) are copied
  /// straight out of it, once; a message split across reads is gathered in its own payload
  /// array, which becomes the frame's. No list of messages is made: a read usually completes
  /// one. When it throws, messages before the bad one may have been passed to `body`.
  mutating func append(
    _ bytes: UnsafeRawBufferPointer, _ body: (Frame, _ owed: Int) -> Void
  ) throws(Failure) -> Int {
    try append(bytes, lending: false) { frame, _, owed in body(frame, owed) }
  }

  /// ``append(_:_:)``, but when `lending`, a message whole in `bytes` is not copied: `body`
  /// gets a frame with an empty payload and the message as a view of `bytes` (`lent`),
  /// valid as long as `bytes` is. A message split across reads comes as a frame of its own
  /// payload, `lent` nil, as it always does.
  mutating func append(
    _ bytes: UnsafeRawBufferPointer, lending: Bool,
    _ body: (Frame, _ lent: UnsafeRawBufferPointer?, _ owed: Int) -> Void
  ) throws(Failure) -> Int {
    // The account goes to each closure inout, not captured by a local function: the vars a
    // local function changes live in boxes whose every access is checked at run time (six
    // per chunk).
    var account = Account(fromEarlier: unfinishedCount)
    var position = 0
    if unfinishedCount > 0 {
      position = try continueUnfinished(bytes) { account.hand($0, nil, to: body) }
      if unfinishedCount > 0 { return bytes.count - account.owedByFrames }
    }
    let rest = UnsafeRawBufferPointer(rebasing: bytes[position...])
    let consumed = try parse(rest, lending: lending) { account.hand($0, $1, to: body) }
    if consumed < rest.count {
      _ = try continueUnfinished(UnsafeRawBufferPointer(rebasing: rest[consumed...])) {
        account.hand($0, nil, to: body)
      }
    }
    return bytes.count - account.owedByFrames
  }

  /// What the messages one chunk completes owe: their bytes that came in this chunk (those
  /// of a message begun in an earlier one were acknowledged as they came).
  private struct Account {
    /// Bytes of the first message that came before this chunk.
    var fromEarlier: Int
    /// What the messages handed on so far owe.
    var owedByFrames = 0

    /// Hands `frame` (or the message `lent`) to `body` with what it owes.
    mutating func hand(
      _ frame: Frame, _ lent: UnsafeRawBufferPointer?,
      to body: (Frame, _ lent: UnsafeRawBufferPointer?, _ owed: Int) -> Void
    ) {
      let owed = (lent.map { 5 + $0.count } ?? frame.wireSize) - fromEarlier
      fromEarlier = 0
      owedByFrames += owed
      body(frame, lent, owed)
    }
  }

  /// Adds the start of `raw` to the unfinished message (or starts one); returns how many
  /// bytes it took: all of `raw`, or up to the end of the message, which then goes to
  /// `emit`.
  private mutating func continueUnfinished(
    _ raw: UnsafeRawBufferPointer, _ emit: (Frame) -> Void
  ) throws(Failure) -> Int {
    var position = 0
    while unfinishedCount < 5 {
      guard position < raw.count else { return position }
      prefix = prefix << 8 | UInt64(raw[position])
      position += 1
      unfinishedCount += 1
    }
    let flag = UInt8(truncatingIfNeeded: prefix >> 32)
    let length = Int(prefix & 0xFFFF_FFFF)
    if unfinishedCount == 5 && position > 0 {
      // The prefix has just completed: checked as parse checks a whole one.
      guard flag <= 1 else { throw .badFlag(flag) }
      guard length <= maxMessageSize else {
        throw .tooLarge(announced: length, limit: maxMessageSize)
      }
    }
    let take = min(length - payload.count, raw.count - position)
    payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[position..<position + take]))
    position += take
    unfinishedCount += take
    if payload.count == length {
      let frame = Frame(compressed: flag == 1, payload: payload)
      payload = []
      prefix = 0
      unfinishedCount = 0
      emit(frame)
    }
    return position
  }

  /// Takes the complete messages at the start of `raw`, copied or (`lending`) as views of
  /// `raw`; returns how many bytes they used.
  private func parse(
    _ raw: UnsafeRawBufferPointer, lending: Bool,
    _ emit: (Frame, _ lent: UnsafeRawBufferPointer?) -> Void
  ) throws(Failure) -> Int {
    var position = 0
    while raw.count - position >= 5 {
      let flag = raw[position]
      guard flag <= 1 else { throw .badFlag(flag) }
      let length =
        Int(raw[position + 1]) << 24 | Int(raw[position + 2]) << 16
        | Int(raw[position + 3]) << 8 | Int(raw[position + 4])
      guard length <= maxMessageSize else {
        throw .tooLarge(announced: length, limit: maxMessageSize)
      }
      guard raw.count - position - 5 >= length else { break }
      let start = position + 5
      if lending {
        emit(
          Frame(compressed: flag == 1, payload: []),
          UnsafeRawBufferPointer(rebasing: raw[start..<start + length]))
      } else {
        emit(Frame(compressed: flag == 1, payload: Array(raw[start..<start + length])), nil)
      }
      position = start + length
    }
    return position
  }
}
