// Public: the protocol is usable from the runtime's @inlinable code (ProtoArena, ProtoC),
// which generated code in other modules inlines.
public import CProtobufC

/// A generated message's link to its protobuf-c struct; every generated message conforms.
///
/// Public, its requirements `@_spi(GeneratedCode)`: generated messages conform publicly, in
/// this package's modules and in a user's own (grpc-wire-gen writes
/// `@_spi(GeneratedCode) public import ProtoRuntime`); code that does not import the SPI sees
/// only the protocol's name. Users never see a C type.
///
/// Decoding unpacks with protobuf-c into arena blocks on the decode's stack
/// (``ProtoArenaBlocks``: protobuf-c's allocator draws on them), copies the fields into the
/// Swift value, building each long string once (``ProtoDecodeStrings``), and frees the blocks,
/// the unpacked tree with them, before returning.
/// Encoding sizes the Swift value and writes it straight into the caller's buffer
/// (``ProtoWriter``), the bytes protobuf-c's pack would give; `encodeThroughC` still builds the
/// C struct tree in a ``ProtoArena`` and packs it with protobuf-c, for the tests that hold the
/// two to the same bytes. No C pointer outlives either call.
public protocol CBridgedMessage: ProtoMessage {
  associatedtype CMessage
  /// protoc-c's descriptor of `CMessage`.
  @_spi(GeneratedCode) static var cDescriptor: UnsafePointer<ProtobufCMessageDescriptor> { get }
  /// Copies an unpacked C message into a Swift value; `strings` holds the long strings this
  /// decode has already built, which the same bytes reuse (see ``ProtoDecodeStrings``).
  @_spi(GeneratedCode) init(
    cMessage: UnsafePointer<CMessage>, strings: inout ProtoDecodeStrings
  ) throws(ProtoDecodingError)
  /// Decodes the wire bytes `bytes` straight into a Swift value, read field by field
  /// (``ProtoReader``), without protobuf-c's unpack; `strings` holds the long strings and
  /// messages this decode has built, which the same bytes reuse. Throws where protobuf-c's
  /// unpack fails, and also for what it leaves to protobuf-c (see
  /// ``decodeFromWire(_:)``).
  @_spi(GeneratedCode) init(
    wireBytes bytes: UnsafeRawBufferPointer, strings: inout ProtoDecodeStrings
  ) throws(ProtoDecodingError)
  /// Whether `cMessage` decodes to exactly this value, read in place without decoding it
  /// (see ``ProtoC``'s matching). Never true for a message that decodes to something else;
  /// false for an equal map field that is not empty (a decode then tells).
  @_spi(GeneratedCode) func matches(cMessage: UnsafePointer<CMessage>) -> Bool
  /// Writes this value into `c`, which protobuf-c has initialised; memory comes from `arena`.
  @_spi(GeneratedCode) func fill(_ c: UnsafeMutablePointer<CMessage>, _ arena: ProtoArena)
  /// The number of bytes ``write(to:)`` writes.
  @_spi(GeneratedCode) func encodedSize() -> Int
  /// Writes the wire encoding, protobuf-c's pack of this value byte for byte, at `writer`,
  /// which has room for ``encodedSize()`` bytes.
  @_spi(GeneratedCode) func write(to writer: inout ProtoWriter)
  /// Whether this message can hold a message of a recursive type (one that can hold its own
  /// type), however deep down: then bytes can nest it past any stack (see
  /// ``ProtoDecodeStrings/depthLimit``). grpc-wire-gen writes `true` for those; else false.
  @_spi(GeneratedCode) static var reachesRecursiveType: Bool { get }
}

extension CBridgedMessage {
  @_spi(GeneratedCode) public static var reachesRecursiveType: Bool { false }

  @_spi(GeneratedCode) public static func decodeThroughC(
    _ bytes: UnsafeRawBufferPointer
  ) throws(ProtoDecodingError) -> Self {
    try withUnpacked(bytes) { (c) throws(ProtoDecodingError) -> Self in try Self(cMessage: c) }
  }

  /// Decodes `bytes` straight from the wire (``init(wireBytes:strings:)``); when that throws,
  /// through protobuf-c (``decodeThroughC(_:)``), whose verdict and value are the answer.
  ///
  /// The straight decode reads every field as protobuf-c's unpack reads it, and throws for
  /// everything protobuf-c refuses; it also throws for what it does not reproduce: a
  /// non-repeated message field seen twice (protobuf-c merges the two, by rules of its own),
  /// a string that is not UTF-8 (which protobuf-c's unpack never checks: the bridge refuses
  /// it only if it survives into the tree), a field number protobuf-c would keep as unknown
  /// but the bridge refuses. All are bad or unusual input; a second decode costs them nothing
  /// that matters, and makes the answer protobuf-c's for every input but one kind: bytes that
  /// nest past ``ProtoDecodeStrings/depthLimit`` levels are refused as malformed on purpose,
  /// never handed to protobuf-c, whose unpack recurses without limit. The straight decode
  /// refuses them when it reaches the level past the limit; when it throws earlier in wire
  /// order, a message that can hold a recursive type is first scanned for nesting
  /// (``ProtoReader/nests(_:deeperThan:)``, iterative).
  @_spi(GeneratedCode) public static func decodeFromWire(_ bytes: UnsafeRawBufferPointer)
    throws(ProtoDecodingError) -> Self
  {
    var strings = ProtoDecodeStrings()
    do {
      return try Self(wireBytes: bytes, strings: &strings)
    } catch {
      // Nested deeper than protobuf-c's unpack could go on a thread's stack: refused.
      guard
        !strings.tooDeep,
        !(reachesRecursiveType
          && ProtoReader.nests(bytes, deeperThan: ProtoDecodeStrings.depthLimit))
      else {
        throw ProtoDecodingError(
          message: protoMessageName, reason: .malformed, byteCount: bytes.count)
      }
      return try decodeThroughC(bytes)
    }
  }

  /// For messages generated before grpc-wire-gen wrote a straight decode: protobuf-c's
  /// unpack of `bytes` (a merge of a field seen twice is then this message's own, not its
  /// parent's: the parent's straight decode hands such input to protobuf-c first).
  @_spi(GeneratedCode) public init(
    wireBytes bytes: UnsafeRawBufferPointer, strings: inout ProtoDecodeStrings
  ) throws(ProtoDecodingError) {
    self = try Self.decodeThroughC(bytes)
  }

  /// Copies an unpacked C message into a Swift value, a decode of its own: long strings are
  /// shared within `cMessage`'s tree only.
  @inlinable @_spi(GeneratedCode) public init(cMessage: UnsafePointer<CMessage>)
    throws(ProtoDecodingError)
  {
    var strings = ProtoDecodeStrings()
    try self.init(cMessage: cMessage, strings: &strings)
  }

  /// Unpacks `bytes` with protobuf-c and hands the C message to `body`, for a caller that
  /// reads it in place (``matches(cMessage:)``, or a merge that decodes only what changed);
  /// the message is gone when `body` returns. A `ProtoDecodingError` from `body` is rethrown
  /// with this message's name and the size of `bytes`, as a decode's would be.
  package static func withUnpacked<Result>(
    _ bytes: UnsafeRawBufferPointer,
    _ body: (UnsafePointer<CMessage>) throws(ProtoDecodingError) -> Result
  ) throws(ProtoDecodingError) -> Result {
    // protobuf-c allocates every node of the unpacked tree through its allocator; giving it
    // our arena's blocks turns hundreds of malloc/free pairs into a few blocks, freed together
    // when `blocks` goes. They live on this stack frame, not in a ProtoArena object: one
    // allocation less per decode. protobuf_c_message_free_unpacked would only call the no-op
    // `free` for each node, so it is not called: the blocks, not protobuf-c, own that memory.
    var blocks = ProtoArenaBlocks(initialCapacity: 4 * bytes.count + 256)
    return try withUnsafeMutablePointer(to: &blocks) {
      (blocks) throws(ProtoDecodingError) -> Result in
      var allocator = ProtoArenaBlocks.protobufCAllocator(blocks)
      // protobuf-c reads nothing for an empty buffer, but wants a pointer all the same.
      var empty: UInt8 = 0
      let unpacked = withUnsafePointer(to: &empty) { emptyPointer in
        protobuf_c_message_unpack(
          cDescriptor, &allocator, bytes.count,
          bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer)
      }
      guard let unpacked else {
        throw ProtoDecodingError(
          message: protoMessageName, reason: .malformed, byteCount: bytes.count)
      }
      do throws(ProtoDecodingError) {
        return try body(UnsafeRawPointer(unpacked).assumingMemoryBound(to: CMessage.self))
      } catch {
        throw ProtoDecodingError(
          message: protoMessageName, reason: error.reason, byteCount: bytes.count)
      }
    }
  }

  /// This value as protobuf-c's struct, built in an arena that lives while `body` runs.
  package func withCMessage<Result, Failure: Error>(
    _ body: (UnsafePointer<CMessage>) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    let arena = ProtoArena()
    return try withExtendedLifetime(arena) { () throws(Failure) -> Result in
      try body(UnsafePointer(arena.message(self)))
    }
  }

  /// Appends the wire encoding to `buffer`, written straight from the Swift value.
  @_spi(GeneratedCode) public func encodeDirect(appendingTo buffer: inout [UInt8]) {
    let size = encodedSize()
    appendUninitialized(size, to: &buffer) { out in
      var writer = ProtoWriter(out)
      write(to: &writer)
      return writer.position - out
    }
  }

  /// Appends the wire encoding to `buffer` as protobuf-c packs this value's C struct tree:
  /// what ``encodeDirect(appendingTo:)`` must equal, byte for byte.
  package func encodeThroughC(appendingTo buffer: inout [UInt8]) {
    let arena = ProtoArena()
    let message = UnsafeRawPointer(arena.message(self)).assumingMemoryBound(
      to: ProtobufCMessage.self)
    withExtendedLifetime(arena) {
      let size = protobuf_c_message_get_packed_size(message)
      appendUninitialized(size, to: &buffer) { out in protobuf_c_message_pack(message, out) }
    }
  }
}

/// Appends `size` bytes to `buffer`, written by `write` (which returns how many it wrote, to
/// be checked against `size`).
private func appendUninitialized(
  _ size: Int, to buffer: inout [UInt8], _ write: (UnsafeMutablePointer<UInt8>) -> Int
) {
  guard size > 0 else { return }
  if buffer.isEmpty && buffer.capacity < size {
    // serializedBytes(): write straight into a new array's storage. (A caller's empty buffer
    // with room to spare is kept, so reusing a buffer costs no allocation.)
    buffer = [UInt8](unsafeUninitializedCapacity: size) { out, count in
      count = write(out.baseAddress!)
    }
    precondition(buffer.count == size, "wrote \(buffer.count) of \(size) bytes")
    return
  }
  // Arrays cannot grow uninitialised, and zero-filling through a generic append crawls
  // byte by byte in debug builds: grow by memcpy from a page of zeros, then write in place.
  let start = buffer.count
  buffer.reserveCapacity(start + size)
  var remaining = size
  while remaining > 0 {
    let count = min(remaining, zeroPage.count)
    buffer.append(contentsOf: UnsafeBufferPointer(rebasing: zeroPage[..<count]))
    remaining -= count
  }
  let written = buffer.withUnsafeMutableBufferPointer { out in write(out.baseAddress! + start) }
  precondition(written == size, "wrote \(written) of \(size) bytes")
}

/// 64 KiB of zeros, written once and only ever read: the source appendUninitialized grows
/// buffers from.
nonisolated(unsafe) private let zeroPage: UnsafeBufferPointer<UInt8> = {
  let page = UnsafeMutablePointer<UInt8>.allocate(capacity: 64 << 10)
  page.initialize(repeating: 0, count: 64 << 10)
  return UnsafeBufferPointer(start: page, count: 64 << 10)
}()
