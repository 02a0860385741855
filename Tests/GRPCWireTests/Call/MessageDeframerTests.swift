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

  /// ``stream`` fed in two pieces, cut at `cut`: each message's bytes, whether it came lent,
  /// and what it owed, from a deframer lending (or not) the messages whole in a piece.
  static func frames(cut: Int, lending: Bool) throws
    -> [(bytes: [UInt8], lent: Bool, owed: Int)]
  {
    var deframer = MessageDeframer(maxMessageSize: 4 << 20)
    var frames: [(bytes: [UInt8], lent: Bool, owed: Int)] = []
    for piece in [Array(stream[..<cut]), Array(stream[cut...])] {
      _ = try piece.withUnsafeBytes { raw in
        try deframer.append(raw, lending: lending) { frame, lent, owed in
          guard let lent else { return frames.append((frame.payload, false, owed)) }
          // A view of the piece itself, standing in for the payload.
          #expect(frame.payload.isEmpty)
          #expect(lent.isEmpty || raw.baseAddress! <= lent.baseAddress!)
          #expect(lent.isEmpty || lent.baseAddress! + lent.count <= raw.baseAddress! + raw.count)
          frames.append((Array(lent), true, owed))
        }
      }
    }
    return frames
  }

  @Test(
    "lending: messages whole in a read are views of it, split ones copies; same bytes and owed",
    arguments: 0...stream.count)
  func lending(cut: Int) throws {
    let lent = try Self.frames(cut: cut, lending: true)
    let copied = try Self.frames(cut: cut, lending: false)
    #expect(lent.map(\.bytes) == Self.messages.map(\.payload))
    #expect(lent.map(\.owed) == copied.map(\.owed))
    #expect(copied.allSatisfy { !$0.lent })
    // The first message (205 bytes on the wire) is lent unless the cut falls inside it.
    #expect(lent[0].lent == (cut == 0 || cut >= 205))
  }
}
