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
  mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [Frame] {
    buffer.append(contentsOf: bytes)
    var frames: [Frame] = []
    while buffer.count - readIndex >= 5 {
      let flag = buffer[readIndex]
      guard flag <= 1 else { throw .badFlag(flag) }
      let length =
        Int(buffer[readIndex + 1]) << 24 | Int(buffer[readIndex + 2]) << 16
        | Int(buffer[readIndex + 3]) << 8 | Int(buffer[readIndex + 4])
      guard length <= maxMessageSize else {
        throw .tooLarge(announced: length, limit: maxMessageSize)
      }
      guard buffer.count - readIndex - 5 >= length else { break }
      let start = readIndex + 5
      frames.append(Frame(compressed: flag == 1, payload: Array(buffer[start..<start + length])))
      readIndex = start + length
    }
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
}
