import Testing

@testable import GRPCWire

/// ``SessionEvents``' DATA: bytes inside the input nghttp2 is reading are referred to where
/// they lie (no copy per frame), bytes elsewhere are copied, and ``SessionEvents/keepLentBytes()``
/// turns the references into copies that outlive the input. Header blocks' buffers are kept
/// from read to read, within a bound.
@Suite("Session events: DATA lent from the read, or copied; header block buffers kept")
struct SessionEventsTests {
  /// The bytes each DATA event of `events` hands over, with its stream, and whether it was
  /// lent (referred to where it lies) rather than copied.
  static func data(of events: SessionEvents) -> [(stream: Int32, bytes: [UInt8], lent: Bool)] {
    events.bytes.withUnsafeBytes { copies in
      events.events.compactMap { event in
        switch event {
        case .data(let streamID, let start, let count):
          (streamID, Array(copies[start..<(start + count)]), false)
        case .lentData(let streamID, let chunk):
          (streamID, Array(chunk), true)
        case .headers, .frame, .goAway, .streamClosed, .headersRejected:
          nil
        }
      }
    }
  }

  @Test("DATA inside the lent input is referred to where it lies, not copied")
  func lentDataIsNotCopied() {
    let input: [UInt8] = Array(0..<64)
    var events = SessionEvents()
    input.withUnsafeBytes { read in
      events.data(streamID: 1, UnsafeRawBufferPointer(rebasing: read[5..<30]), lent: read)
      events.data(streamID: 3, UnsafeRawBufferPointer(rebasing: read[39..<64]), lent: read)
      #expect(events.bytes.isEmpty)
      guard case .lentData(_, let chunk) = events.events[0] else {
        Issue.record("not lent: \(events.events[0])")
        return
      }
      #expect(chunk.baseAddress == read.baseAddress! + 5)
    }
    let got = Self.data(of: events)
    #expect(got.map(\.stream) == [1, 3])
    #expect(got.map(\.bytes) == [Array(input[5..<30]), Array(input[39..<64])])
    #expect(got.map(\.lent) == [true, true])
  }

  @Test("DATA outside the lent input, or with none lent, is copied")
  func otherDataIsCopied() {
    let input: [UInt8] = Array(0..<16)
    let elsewhere: [UInt8] = Array(100..<110)
    var events = SessionEvents()
    input.withUnsafeBytes { read in
      elsewhere.withUnsafeBytes { other in
        events.data(streamID: 1, other, lent: read)
        // Straddling the end of the lent bytes: not all of it is lent.
        events.data(
          streamID: 1, UnsafeRawBufferPointer(rebasing: read[8..<16]),
          lent: UnsafeRawBufferPointer(rebasing: read[..<12]))
        events.data(streamID: 5, UnsafeRawBufferPointer(rebasing: read[..<4]), lent: nil)
      }
    }
    let got = Self.data(of: events)
    #expect(got.map(\.lent) == [false, false, false])
    #expect(got.map(\.bytes) == [elsewhere, Array(input[8..<16]), Array(input[..<4])])
  }

  @Test("keepLentBytes copies lent DATA, in order, so it outlives changes to the input")
  func keptBytesOutliveTheInput() {
    var input: [UInt8] = Array(0..<32)
    var events = SessionEvents()
    input.withUnsafeBytes { read in
      events.data(streamID: 1, UnsafeRawBufferPointer(rebasing: read[0..<10]), lent: read)
      events.append(.streamClosed(1, errorCode: 0))
      events.data(streamID: 3, UnsafeRawBufferPointer(rebasing: read[10..<32]), lent: read)
    }
    events.keepLentBytes()
    let expected = [Array(input[0..<10]), Array(input[10..<32])]
    for i in input.indices { input[i] = 0xFF }
    let got = Self.data(of: events)
    #expect(got.map(\.lent) == [false, false])
    #expect(got.map(\.stream) == [1, 3])
    #expect(got.map(\.bytes) == expected)
    #expect(events.events.count == 3)
  }

  /// Records `count` header blocks of `fields` fields each, as one read with that many
  /// blocks does.
  static func recordBlocks(_ count: Int, fields: Int = 1, into events: inout SessionEvents) {
    var recent = RecentHeaderTexts()
    let name = Array("grpc-status".utf8)
    let value = Array("0".utf8)
    for stream in 0..<count {
      events.headersBegin(streamID: Int32(2 * stream + 1), keep: true)
      for _ in 0..<fields {
        events.field(
          name: name, nameLength: name.count, value: value, valueLength: value.count,
          recent: &recent)
      }
      events.headersEnded(
        ReceivedHeaders(streamID: Int32(2 * stream + 1), kind: .trailers, endStream: true))
    }
  }

  /// Where each block's buffer lies.
  static func bufferAddresses(_ events: SessionEvents) -> [UnsafeRawPointer?] {
    events.blocks.map { $0.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) } }
  }

  /// What the kept buffers cost towards the bound.
  static func keptCost(_ events: SessionEvents) -> Int {
    events.blocks.map(SessionEvents.keptCost(of:)).reduce(0, +)
  }

  @Test("A read's header blocks keep their buffers for the next read: 128 of 64 calls' blocks")
  func headerBlockBuffersAreKept() {
    var events = SessionEvents()
    Self.recordBlocks(128, into: &events)
    events.removeAll()
    #expect(events.blocks.count == 128)
    #expect(events.blocks.allSatisfy { $0.isEmpty && $0.capacity >= 12 })
    let kept = Self.bufferAddresses(events)
    #expect(Set(kept).count == 128 && !kept.contains(nil))
    // The next read's blocks go into those very buffers, none made anew.
    Self.recordBlocks(128, into: &events)
    #expect(events.blocks.allSatisfy { $0.count == 1 })
    #expect(Self.bufferAddresses(events) == kept)
    #expect(Self.keptCost(events) <= SessionEvents.keptBytes)
  }

  @Test("A burst of header blocks beyond the bytes kept lets the extra buffers go")
  func burstBlocksAreDropped() {
    var events = SessionEvents()
    Self.recordBlocks(1_000, into: &events)
    #expect(events.blocks.count == 1_000)
    let perBlock = SessionEvents.keptCost(of: events.blocks[0])
    events.removeAll()
    #expect(events.blocks.count == SessionEvents.keptBytes / perBlock)
    #expect(Self.keptCost(events) <= SessionEvents.keptBytes)
    #expect(events.blocks.capacity < 2 * events.blocks.count)
  }

  @Test("Larger blocks count for more: fewer of them are kept, within the same bytes")
  func largerBlocksKeepFewer() {
    var small = SessionEvents()
    Self.recordBlocks(300, into: &small)
    small.removeAll()
    var large = SessionEvents()
    Self.recordBlocks(300, fields: 20, into: &large)
    let perBlock = SessionEvents.keptCost(of: large.blocks[0])
    #expect(perBlock > SessionEvents.keptCost(of: small.blocks[0]))
    large.removeAll()
    #expect(large.blocks.count == SessionEvents.keptBytes / perBlock)
    #expect(large.blocks.count < small.blocks.count)
    #expect(Self.keptCost(large) <= SessionEvents.keptBytes)
  }
}
