internal import CNGHTTP2

/// A frame's header as it arrived, for every frame but HEADERS and GOAWAY (which come as
/// events of their own).
struct ReceivedFrame {
  var type: UInt8
  var flags: UInt8
  var streamID: Int32
  /// The payload's length.
  var length: Int

  var endsStream: Bool { flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0 }
  var isAck: Bool { flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0 }
}

/// A whole header block as it arrived.
struct ReceivedHeaders {
  /// What nghttp2 says the block is (RFC 9113 §8.1: a message's first block, or the trailers).
  enum Kind {
    /// A request's headers (server role).
    case request
    /// A response's headers, or a trailers-only response (client role).
    case response
    /// Trailers, or any later block.
    case trailers
  }

  var streamID: Int32
  var kind: Kind
  var endStream: Bool
}

/// What nghttp2's callbacks recorded during one `mem_recv` or `mem_send`, in order: the
/// session hands it to its role once nghttp2 has returned (``HTTP2Session``), so no role code
/// — resuming a continuation, cancelling a handler, resetting or retrying a stream — runs
/// inside a callback.
///
/// Its buffers are kept between batches: in the steady state recording allocates nothing
/// (a header block's fields go into an array of a previous block, cleared).
struct SessionEvents {
  enum Event {
    case headers(ReceivedHeaders, block: Int)
    case frame(ReceivedFrame)
    /// GOAWAY; its debug data is `debugCount` bytes at `debugStart` of ``bytes`` (no String
    /// here: an event is a plain value, copied and dropped without reference counting).
    case goAway(lastStreamID: Int32, errorCode: UInt32, debugStart: Int, debugCount: Int)
    /// Body bytes of a stream: `count` bytes at `start` of ``bytes``.
    case data(streamID: Int32, start: Int, count: Int)
    /// Body bytes of a stream still where they were read (``lend(_:)``): not copied.
    case lentData(streamID: Int32, UnsafeRawBufferPointer)
    case streamClosed(Int32, errorCode: UInt32)
    /// nghttp2 rejected the header block of a stream (a field RFC 9113 §8.2 forbids, a
    /// missing pseudo-header) and has queued RST_STREAM for it: the block never ends.
    case headersRejected(streamID: Int32, libError: Int32)
  }

  /// The bytes of header-block buffers kept from batch to batch (a block's buffer costs its
  /// capacity in fields, 32 bytes each, and its place in ``blocks``): a session holds two
  /// batches (the one recorded and the one handed over), so about 128 KB at most, either role.
  /// One read can bring two blocks per call in flight, response headers (3 fields from our
  /// server) and trailers (1), each in a buffer made for 12 fields (about 400 bytes): 128
  /// blocks, 50 KB, with 64 calls in flight, which are kept; were fewer kept, every such
  /// read would allocate the rest anew (0.3 allocations per call at 64 in flight when 64
  /// blocks were kept). A burst of more blocks, or of larger ones, lets the excess go.
  static let keptBytes = 64 * 1024

  /// What keeping `block`'s buffer costs, in bytes, towards ``keptBytes``.
  static func keptCost(of block: [HeaderField]) -> Int {
    MemoryLayout<[HeaderField]>.stride + block.capacity * MemoryLayout<HeaderField>.stride
  }

  private(set) var events: [Event] = []
  /// The body bytes of the `.data` events (and GOAWAY's debug data), back to back.
  private(set) var bytes: [UInt8] = []
  /// The fields of the `.headers` events' blocks; only the first `blockCount` are in use.
  private(set) var blocks: [[HeaderField]] = []
  private var blockCount = 0
  /// The block whose fields are arriving (its index in ``blocks`` and its stream), or nil
  /// when they are not kept.
  private var openBlock: (index: Int, streamID: Int32)?
  /// How many `.lentData` events there are.
  private var lentEvents = 0

  var isEmpty: Bool { events.isEmpty }

  /// A header block begins on `streamID`; its fields are kept (``field(…)``) when `keep`.
  mutating func headersBegin(streamID: Int32, keep: Bool) {
    guard keep else {
      openBlock = nil
      return
    }
    if blockCount == blocks.count { blocks.append([]) }
    openBlock = (blockCount, streamID)
    blockCount += 1
  }

  /// Moves the header block still arriving, with its fields so far, to `next`: the events
  /// before it go to the role now, the rest of its fields (in a later read) find it there.
  /// Only the open block waits for its end, never the batch: a block nghttp2 rejects never
  /// ends (``dropOpenBlock(of:)``), and a batch held for it would hold every later event
  /// of the connection.
  mutating func carryOpenBlock(to next: inout SessionEvents) {
    guard let openBlock else { return }
    next.headersBegin(streamID: openBlock.streamID, keep: true)
    swap(&blocks[openBlock.index], &next.blocks[next.openBlock!.index])
    self.openBlock = nil
  }

  /// Forgets the block arriving on `streamID`, which will not end: nghttp2 rejected it, or
  /// closed its stream (after which it drops the block's remaining fields unseen).
  mutating func dropOpenBlock(of streamID: Int32) {
    if openBlock?.streamID == streamID { openBlock = nil }
  }

  mutating func field(
    name: UnsafePointer<UInt8>?, nameLength: Int, value: UnsafePointer<UInt8>?, valueLength: Int,
    recent: inout RecentHeaderTexts
  ) {
    guard let openBlock else { return }
    blocks[openBlock.index].appendReceived(
      name: name, nameLength: nameLength, value: value, valueLength: valueLength, recent: &recent)
  }

  /// The block begun last is whole: `headers` says what it is.
  mutating func headersEnded(_ headers: ReceivedHeaders) {
    events.append(.headers(headers, block: openBlock?.index ?? -1))
    openBlock = nil
  }

  mutating func append(_ event: Event) { events.append(event) }

  /// Copies `debugData` (valid only during the callback).
  mutating func goAway(lastStreamID: Int32, errorCode: UInt32, debugData: UnsafeRawBufferPointer) {
    events.append(
      .goAway(
        lastStreamID: lastStreamID, errorCode: errorCode, debugStart: bytes.count,
        debugCount: debugData.count))
    bytes.append(contentsOf: debugData)
  }

  /// Records body bytes of a stream: referred to where they lie when inside `lent` (the
  /// input of the `nghttp2_session_mem_recv` running, which stays as it is until the events
  /// are handed over or ``keepLentBytes()`` copies them), else copied (valid only during
  /// the callback).
  ///
  /// nghttp2 hands DATA over as pointers into that input ("the memory pointed by the data is
  /// retained until nghttp2_session_mem_recv() … is called",
  /// nghttp2_on_data_chunk_recv_callback): a frame that arrived in one read reaches the
  /// deframer straight from the read buffer, with no copy of its own.
  mutating func data(
    streamID: Int32, _ chunk: UnsafeRawBufferPointer, lent: UnsafeRawBufferPointer?
  ) {
    if let lent, let start = chunk.baseAddress, let base = lent.baseAddress, start >= base,
      start + chunk.count <= base + lent.count
    {
      events.append(.lentData(streamID: streamID, chunk))
      lentEvents += 1
      return
    }
    events.append(.data(streamID: streamID, start: bytes.count, count: chunk.count))
    bytes.append(contentsOf: chunk)
  }

  /// Copies the bytes the `.lentData` events refer to, which are about to change: they
  /// become `.data` events.
  mutating func keepLentBytes() {
    guard lentEvents > 0 else { return }
    lentEvents = 0
    for i in events.indices {
      guard case .lentData(let streamID, let chunk) = events[i] else { continue }
      events[i] = .data(streamID: streamID, start: bytes.count, count: chunk.count)
      bytes.append(contentsOf: chunk)
    }
  }

  /// Forgets the events, keeping the buffers' capacity (within bounds: a burst's buffers go).
  mutating func removeAll() {
    events.removeAll(keepingCapacity: events.capacity <= 1024)
    lentEvents = 0
    bytes.removeAll(keepingCapacity: bytes.capacity <= SessionOutput.keptCapacity)
    for i in 0..<blockCount { blocks[i].clearKeepingUsualCapacity() }
    if blockCount > 0 { keepBlocksWithinBound() }
    blockCount = 0
    openBlock = nil
  }

  /// Lets the buffers beyond ``keptBytes`` go. Only a batch that used blocks can have
  /// grown them: the others leave the kept ones as the last such batch did.
  private mutating func keepBlocksWithinBound() {
    var cost = 0
    for i in blocks.indices {
      cost += Self.keptCost(of: blocks[i])
      guard cost > Self.keptBytes else { continue }
      // A new array: the burst's room in `blocks` goes too.
      blocks = Array(blocks[..<i])
      return
    }
  }
}
