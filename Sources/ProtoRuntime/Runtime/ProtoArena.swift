// Public: C types appear in the @inlinable bodies below.
public import CProtobufC

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A bump allocator for the C struct tree of one encode through protobuf-c: strings, arrays
/// and nested messages are carved out of a few large blocks (``ProtoArenaBlocks``) and all
/// freed together when the arena goes away. (A decode unpacks into blocks on its own stack.)
///
/// Not thread-safe and never shared: one arena belongs to one call.
///
/// `@_spi(GeneratedCode) public`, with what generated code calls per field `@inlinable` (the
/// bump itself included): the messages of other modules, ours and users', fill their C structs
/// from it, and a call across modules per string or nested message would cost what the arena
/// saves.
@_spi(GeneratedCode) public final class ProtoArena {
  @exclusivity(unchecked) @usableFromInline var blocks: ProtoArenaBlocks

  /// - Parameter initialCapacity: the size of the first block; later blocks double.
  package init(initialCapacity: Int = 4096) {
    blocks = ProtoArenaBlocks(initialCapacity: initialCapacity)
  }

  @inlinable @_spi(GeneratedCode) public func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
    blocks.allocate(byteCount: byteCount, alignment: alignment)
  }

  @inlinable @_spi(GeneratedCode) public func allocate<T>(_ type: T.Type, count: Int = 1) -> UnsafeMutablePointer<T> {
    allocate(byteCount: MemoryLayout<T>.stride * count, alignment: MemoryLayout<T>.alignment)
      .bindMemory(to: T.self, capacity: count)
  }

  /// A NUL-terminated copy of `string`. protobuf-c measures strings with strlen, so a string
  /// holding U+0000 is cut there (a limit of protobuf-c's C strings; see CodeGen/README.md).
  @inlinable @_spi(GeneratedCode) public func cString(_ string: String) -> UnsafeMutablePointer<CChar> {
    func copy(_ utf8: UnsafeBufferPointer<UInt8>) -> UnsafeMutablePointer<CChar> {
      let out = allocate(UInt8.self, count: utf8.count + 1)
      if let base = utf8.baseAddress { out.initialize(from: base, count: utf8.count) }
      out[utf8.count] = 0
      return UnsafeMutableRawPointer(out).assumingMemoryBound(to: CChar.self)
    }
    if let copied = string.utf8.withContiguousStorageIfAvailable(copy) { return copied }
    var contiguous = string
    return contiguous.withUTF8(copy)
  }

  @inlinable @_spi(GeneratedCode) public func binary(_ bytes: [UInt8]) -> ProtobufCBinaryData {
    ProtobufCBinaryData(len: bytes.count, data: copy(bytes))
  }

  @inlinable @_spi(GeneratedCode) public func copy<T>(_ values: [T]) -> UnsafeMutablePointer<T> {
    let out = allocate(T.self, count: values.count)
    values.withUnsafeBufferPointer { out.initialize(from: $0.baseAddress!, count: values.count) }
    return out
  }

  @inlinable @_spi(GeneratedCode) public func map<T, C>(_ values: [T], _ transform: (T) -> C)
    -> UnsafeMutablePointer<C>
  {
    let out = allocate(C.self, count: values.count)
    for (i, v) in values.enumerated() { (out + i).initialize(to: transform(v)) }
    return out
  }

  @inlinable @_spi(GeneratedCode) public func message<M: CBridgedMessage>(_ value: M)
    -> UnsafeMutablePointer<M.CMessage>
  {
    let c = allocate(M.CMessage.self)
    protobuf_c_message_init(M.cDescriptor, c)
    value.fill(c, self)
    return c
  }

  @inlinable @_spi(GeneratedCode) public func messages<M: CBridgedMessage>(_ values: [M]) -> UnsafeMutablePointer<
    UnsafeMutablePointer<M.CMessage>?
  > {
    map(values) { Optional(message($0)) }
  }

  /// The entries of a proto `map` field, in key order so that encoding is deterministic.
  @inlinable @_spi(GeneratedCode) public func mapEntries<K: Comparable, V, Entry>(
    _ values: [K: V], descriptor: UnsafePointer<ProtobufCMessageDescriptor>, as: Entry.Type,
    fill: (K, V, UnsafeMutablePointer<Entry>) -> Void
  ) -> UnsafeMutablePointer<UnsafeMutablePointer<Entry>?> {
    map(values.sorted { $0.key < $1.key }) { key, value in
      let entry = allocate(Entry.self)
      protobuf_c_message_init(descriptor, entry)
      fill(key, value, entry)
      return Optional(entry)
    }
  }
}

/// The blocks of one arena and the bump through them: what ``ProtoArena`` allocates from, and,
/// on the stack of one decode, what protobuf-c's unpack allocates from
/// (``CBridgedMessage/withUnpacked(_:_:)``), so that a decode allocates no arena object.
///
/// Not copyable: the blocks are freed (the first given back to this thread's
/// ``ThreadBlockCache``) when the value goes.
@_spi(GeneratedCode) public struct ProtoArenaBlocks: ~Copyable {
  @usableFromInline var block: UnsafeMutableRawPointer?
  @usableFromInline var used = 0
  @usableFromInline var capacity = 0
  private var full: [UnsafeMutableRawPointer] = []
  /// Which block came from this thread's cache (see ``ThreadBlockCache``) and goes back to it.
  private var cachedBlock: UnsafeMutableRawPointer?

  /// - Parameter initialCapacity: the size of the first block; later blocks double.
  package init(initialCapacity: Int) {
    capacity = initialCapacity / 2
  }

  deinit {
    for b in full where b != cachedBlock { free(b) }
    if let block, block != cachedBlock { free(block) }
    if let cachedBlock { ThreadBlockCache.giveBack(cachedBlock) }
  }

  @inlinable mutating func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
    let start = (used + alignment - 1) & ~(alignment - 1)
    if let block, start + byteCount <= capacity {
      used = start + byteCount
      return block + start
    }
    return allocateInNewBlock(byteCount: byteCount, alignment: alignment)
  }

  /// ``allocate(byteCount:alignment:)`` when the current block is full or there is none yet.
  @usableFromInline mutating func allocateInNewBlock(byteCount: Int, alignment: Int)
    -> UnsafeMutableRawPointer
  {
    var start = (used + alignment - 1) & ~(alignment - 1)
    if block == nil || start + byteCount > capacity {
      if let block { full.append(block) }
      // A realistic Trip needs a few KiB; doubling keeps large messages to a few blocks.
      capacity = max(byteCount + alignment, capacity * 2, 256)
      if cachedBlock == nil, capacity <= ThreadBlockCache.blockSize {
        // The first block of most arenas: this thread's reusable one, not a fresh malloc
        // (of a block large enough that freeing it made malloc consolidate every time).
        let reused = ThreadBlockCache.take()
        cachedBlock = reused
        block = reused
        capacity = ThreadBlockCache.blockSize
      } else {
        guard let fresh = malloc(capacity) else { fatalError("out of memory encoding a message") }
        block = fresh
      }
      start = 0
    }
    used = start + byteCount
    return block! + start
  }

  /// A protobuf-c allocator drawing on the blocks at `blocks`, which must stay where they are
  /// while protobuf-c uses it.
  package static func protobufCAllocator(_ blocks: UnsafeMutablePointer<ProtoArenaBlocks>)
    -> ProtobufCAllocator
  {
    ProtobufCAllocator(alloc: blocksAllocate, free: arenaFree, allocator_data: blocks)
  }
}

/// One arena block per thread, reused by one arena after another: encoding or decoding a
/// message then costs no malloc and free of its first block. An arena that finds the slot
/// empty (another arena of this thread holds the block) mallocs one of the same size; the
/// slot keeps at most one, and the thread's block is freed when the thread ends.
enum ThreadBlockCache {
  static let blockSize = 64 << 10

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    precondition(pthread_key_create(&key) { free($0) } == 0, "pthread_key_create failed")
    return key
  }()

  static func take() -> UnsafeMutableRawPointer {
    if let block = pthread_getspecific(key) {
      pthread_setspecific(key, nil)
      return block
    }
    guard let fresh = malloc(blockSize) else { fatalError("out of memory for a message") }
    return fresh
  }

  static func giveBack(_ block: UnsafeMutableRawPointer) {
    if pthread_getspecific(key) == nil {
      pthread_setspecific(key, block)
    } else {
      free(block)
    }
  }
}

private func blocksAllocate(_ data: UnsafeMutableRawPointer?, _ size: Int)
  -> UnsafeMutableRawPointer?
{
  // malloc's alignment: protobuf-c stores any C type in what it allocates.
  data!.assumingMemoryBound(to: ProtoArenaBlocks.self).pointee.allocate(
    byteCount: max(size, 1), alignment: 16)
}

private func arenaFree(_ data: UnsafeMutableRawPointer?, _ pointer: UnsafeMutableRawPointer?) {
  // The arena frees everything at once when it goes away.
}
