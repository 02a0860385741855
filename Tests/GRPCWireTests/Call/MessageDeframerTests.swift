import Testing

@testable import GRPCWire

/// The deframer fed a stream's DATA in pieces: every split gives the frames of one whole
/// read, a message split across reads is complete once its last byte is in, and nothing stays
/// buffered between messages.
@Suite("Message deframer")
struct MessageDeframerTests {
  /// Three messages (one empty, one compressed) as one stream's bytes.
  static let messages: [(compressed: Bool, payload: [UInt8])] = [
    (false, Array(0..<200)), (false, []), (true, Array(repeating: 7, count: 70)),
  ]
  static let stream: [UInt8] = messages.flatMap { message in
    let length = UInt32(message.payload.count)
    return [message.compressed ? 1 : 0]
      + (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) } + message.payload
  }

  /// Feeds `bytes` in pieces ending at `cuts`; returns the frames and what stayed buffered.
  static func deframe(_ bytes: [UInt8], cuts: [Int], limit: Int = 4 << 20) throws
    -> (frames: [MessageDeframer.Frame], buffered: Int)
  {
    var deframer = MessageDeframer(maxMessageSize: limit)
    var frames: [MessageDeframer.Frame] = []
    var start = 0
    for end in cuts + [bytes.count] where end >= start {
      let piece = Array(bytes[start..<end])
      frames += try piece.withUnsafeBytes { try deframer.append($0) }
      start = end
    }
    return (frames, deframer.bufferedByteCount)
  }

  @Test("a stream cut anywhere, once, gives the same frames", arguments: 0...stream.count)
  func oneCut(at cut: Int) throws {
    let (frames, buffered) = try Self.deframe(Self.stream, cuts: [cut])
    #expect(frames.map(\.payload) == Self.messages.map(\.payload))
    #expect(frames.map(\.compressed) == Self.messages.map(\.compressed))
    #expect(buffered == 0)
  }

  @Test("a stream fed one byte at a time gives the same frames")
  func byteByByte() throws {
    let (frames, buffered) = try Self.deframe(Self.stream, cuts: Array(0..<Self.stream.count))
    #expect(frames.map(\.payload) == Self.messages.map(\.payload))
    #expect(buffered == 0)
  }

  @Test("an unfinished message counts as buffered, prefix included, until its last byte")
  func unfinished() throws {
    let firstEnd = 5 + 200
    for end in [1, 5, 6, firstEnd - 1] {
      let (frames, buffered) = try Self.deframe(Array(Self.stream[..<end]), cuts: [end / 2])
      #expect(frames.isEmpty)
      #expect(buffered == end)
    }
    let (frames, buffered) = try Self.deframe(Array(Self.stream[..<firstEnd]), cuts: [3, 100])
    #expect(frames.map(\.payload) == [Self.messages[0].payload])
    #expect(buffered == 0)
  }

  @Test("a prefix split across reads is checked once complete: flag, then limit")
  func splitPrefixChecked() {
    #expect(throws: MessageDeframer.Failure.badFlag(2)) {
      try Self.deframe([2, 0, 0, 0, 1, 9], cuts: [1, 3])
    }
    #expect(throws: MessageDeframer.Failure.tooLarge(announced: 200, limit: 100)) {
      try Self.deframe(Self.stream, cuts: [2, 4], limit: 100)
    }
  }
}
