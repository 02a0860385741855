/// Splits a stream's DATA bytes into gRPC messages: a 1-byte compressed flag, a 4-byte
/// big-endian length, then the message (PROTOCOL-HTTP2.md, "Length-Prefixed-Message").
///
/// Lives on the loop with its stream. A message longer than `maxMessageSize` is refused as soon
/// as its prefix arrives, before any of it is buffered.
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
  private var buffer: [UInt8] = []
  private var readIndex = 0

  init(maxMessageSize: Int) {
    self.maxMessageSize = maxMessageSize
  }

  /// Bytes received that are not yet part of a complete message.
  var bufferedByteCount: Int { buffer.count - readIndex }

  /// Adds `bytes` and returns the messages they complete, in order.
  ///
  /// With nothing buffered (the common case: DATA frames hold whole messages) messages are
  /// copied straight out of `bytes`, once; only an unfinished tail is buffered.
  mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [Frame] {
    var frames: [Frame] = []
    if readIndex == buffer.count {
      buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
      readIndex = 0
      let consumed = try parse(bytes, into: &frames)
      if consumed < bytes.count {
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
      }
      return frames
    }
    buffer.append(contentsOf: bytes)
    let start = readIndex
    // withUnsafeBytes cannot forward a typed throw: the outcome travels out as a value.
    let parsed = buffer.withUnsafeBytes { raw -> Result<Int, Failure> in
      Result { () throws(Failure) in
        try parse(UnsafeRawBufferPointer(rebasing: raw[start...]), into: &frames)
      }
    }
    let consumed = try parsed.get()
    readIndex += consumed
    // Compact once the consumed prefix dominates, so the buffer never grows without bound.
    if readIndex == buffer.count {
      buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
      readIndex = 0
    } else if readIndex > 65_536 && readIndex * 2 > buffer.count {
      buffer.removeSubrange(..<readIndex)
      readIndex = 0
    }
    return frames
  }

  /// Takes the complete messages at the start of `raw`; returns how many bytes they used.
  private func parse(_ raw: UnsafeRawBufferPointer, into frames: inout [Frame]) throws(Failure)
    -> Int
  {
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
      frames.append(
        Frame(compressed: flag == 1, payload: Array(raw[start..<start + length])))
      position = start + length
    }
    return position
  }
}

extension MessageDeframer {
  /// How the bytes of one read are owed back to the peer's flow-control window, for a
  /// receiver that acknowledges a complete message only when its reader takes it (client
  /// and server alike): calls `body` with each frame that read completed and the bytes it
  /// took on the wire, less those of it that arrived in earlier reads (acknowledged then);
  /// returns the bytes of the read left in the message still arriving, to acknowledge now so
  /// that a message larger than the window can complete.
  ///
  /// `frames` is what ``append(_:)`` returned for a read of `readCount` bytes, and
  /// `bufferedBefore` the ``bufferedByteCount`` just before it.
  @inline(__always)
  static func shareCredit(
    of frames: [Frame], bufferedBefore: Int, readCount: Int, _ body: (Frame, Int) -> Void
  ) -> Int {
    var fromEarlier = frames.isEmpty ? 0 : bufferedBefore
    var owedByFrames = 0
    for frame in frames {
      let owed = frame.wireSize - fromEarlier
      fromEarlier = 0
      owedByFrames += owed
      body(frame, owed)
    }
    return readCount - owedByFrames
  }
}
