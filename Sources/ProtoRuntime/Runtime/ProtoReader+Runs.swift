#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A message whose usual encoding is one run of bytes of a fixed size: every field once, in
/// number order, each with its one-byte tag and a fixed-width value, as protobuf-c, Google's
/// encoders and ours write it when no value is zero (a `google.type.LatLng`: two doubles, 18
/// bytes). grpc-wire-gen conforms the messages of singular fixed-width scalars alone; any
/// other bytes of such a message (a field left out at zero, repeated, reordered, unknown) take
/// its field loop, which reads them as protobuf-c does, and on the layout's bytes both read
/// the same values. Public, its requirements `@_spi(GeneratedCode)`, as ``CBridgedMessage``'s.
public protocol ProtoFixedLayoutMessage: CBridgedMessage {
  /// The layout's size in bytes: the message's data, without its field's tag and length.
  @_spi(GeneratedCode) static var fixedLayoutSize: Int { get }
  /// The value whose encoding is the ``fixedLayoutSize`` bytes at `p`, nil when they are not
  /// the layout (a tag differs).
  @_spi(GeneratedCode) static func fixedLayout(at p: UnsafeRawPointer) -> Self?
}

extension ProtoReader {
  /// Appends `first`, the element of the repeated field `number` just read, to `list`, then
  /// the elements of the same field that follow it in the fixed layout, each its canonical
  /// tag, a one-byte length of ``ProtoFixedLayoutMessage/fixedLayoutSize`` and the layout:
  /// loaded in place, without the field loop's tag, switch and call per element (a Trip's
  /// paths are 130 LatLngs, about a third of its decode, issue 37). It stops at the first
  /// element in another form, which the field loop reads next, as it reads every element.
  ///
  /// An empty `list` gets room for the whole run of the field's elements, as
  /// ``run(of:)`` counts it, the elements in another form included.
  @inlinable @_spi(GeneratedCode) public mutating func appendRun<M: ProtoFixedLayoutMessage>(
    of number: UInt32, to list: inout [M], after first: M
  ) {
    guard let run = ProtoFixedRun(number, M.fixedLayoutSize) else {
      if list.isEmpty { list.reserveCapacity(1 + self.run(of: number)) }
      list.append(first)
      return
    }
    let p = position + run.step * run.count(from: position, to: end)
    var q = position
    guard list.isEmpty else {
      list.append(first)
      while q < p, let value = M.fixedLayout(at: q + run.headerSize) {
        list.append(value)
        q += run.step
      }
      position = q
      return
    }
    var rest = self
    rest.position = p
    let room = 1 + (p - q) / run.step + rest.run(of: number)
    list = [M](unsafeUninitializedCapacity: room) { buffer, initialized in
      buffer.initializeElement(at: 0, to: first)
      initialized = 1
      while q < p, let value = M.fixedLayout(at: q + run.headerSize) {
        buffer.initializeElement(at: initialized, to: value)
        initialized += 1
        q += run.step
      }
    }
    position = q
  }
}

/// The elements of a repeated field of a ``ProtoFixedLayoutMessage`` type as encoders write
/// them one after the other: each its field's tag in its shortest form (one or two bytes), a
/// one-byte length, the layout's size, and the layout.
@usableFromInline struct ProtoFixedRun {
  /// An element's tag and length bytes, little-endian, and how many there are (2 or 3).
  @usableFromInline let header: UInt32
  @usableFromInline let headerSize: Int
  /// From one element's tag to the next's.
  @usableFromInline let step: Int

  /// The run of field `number`'s elements of `size` bytes; nil when a tag or the length would
  /// take more bytes (such runs take the field loop).
  @inlinable init?(_ number: UInt32, _ size: Int) {
    let tag = number << 3 | 2
    guard size < 0x80 else { return nil }
    if tag < 0x80 {
      header = tag | UInt32(size) << 8
      headerSize = 2
    } else if tag < 0x4000 {
      header = tag & 0x7f | 0x80 | (tag >> 7) << 8 | UInt32(size) << 16
      headerSize = 3
    } else {
      return nil
    }
    step = headerSize + size
  }

  /// How many elements with this header start at `p`, one after the other, before `end`.
  @inlinable func count(from p: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>) -> Int {
    let mask: UInt32 = headerSize == 2 ? 0xffff : 0xff_ffff
    var count = 0
    var p = p
    // Four bytes loaded: an element has at least 7 (a layout at least 5).
    while end - p >= step,
      UInt32(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt32.self)) & mask == header
    {
      count += 1
      p += step
    }
    return count
  }
}

extension ProtoListSharing {
  /// ``decode(_:_:_:earlier:in:_:_:)`` for a list of a ``ProtoFixedLayoutMessage`` type (a
  /// Trip's route): when its elements are a run in the fixed layout of as many elements as
  /// `earlier`, and so are the first of `earlier`'s in `source`, each pair with the same data,
  /// the list is `earlier`, found by comparing the runs at their strides, without the cursors'
  /// field loop per element (a Trip's route cost 8 % of its decode that way, issue 37). Any
  /// other bytes take the cursors, which decide the same for these.
  @inlinable @_spi(GeneratedCode) public static func decode<M: ProtoFixedLayoutMessage>(
    _ list: inout [M], _ bytes: UnsafeRawBufferPointer, _ number: UInt32, earlier: [M],
    in source: UnsafeRawBufferPointer?, _ sourceNumber: UInt32,
    _ decode: (UnsafeRawBufferPointer) throws(ProtoDecodingError) -> M
  ) throws(ProtoDecodingError) {
    if sameRuns(bytes, number, earlier.count, source, sourceNumber, M.fixedLayoutSize) {
      list = earlier
      return
    }
    try decodeEach(&list, bytes, number, earlier: earlier, in: source, sourceNumber, decode)
  }

  /// Whether `bytes` are `count` elements of field `number` in the fixed layout of `size`
  /// bytes, and the first `count` fields `sourceNumber` of `source` the same layouts with the
  /// same data, one after the other.
  @inlinable static func sameRuns(
    _ bytes: UnsafeRawBufferPointer, _ number: UInt32, _ count: Int,
    _ source: UnsafeRawBufferPointer?, _ sourceNumber: UInt32, _ size: Int
  ) -> Bool {
    guard count > 0, let mine = ProtoFixedRun(number, size),
      let theirs = ProtoFixedRun(sourceNumber, size), bytes.count == count * mine.step,
      let a = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
      mine.count(from: a, to: a + bytes.count) == count,
      let source, let start = source.baseAddress,
      let first = ProtoReader.first(sourceNumber, in: source)?.baseAddress
    else { return false }
    // The first element's tag, when it is in its shortest form (the header's check says): no
    // longer form is shorter, so it is inside `source`.
    let b = first.assumingMemoryBound(to: UInt8.self) - theirs.headerSize
    let end = start.assumingMemoryBound(to: UInt8.self) + source.count
    guard theirs.count(from: b, to: end) >= count else { return false }
    for i in 0..<count {
      let x = UnsafeRawPointer(a + i * mine.step + mine.headerSize)
      let y = UnsafeRawPointer(b + i * theirs.step + theirs.headerSize)
      guard memcmp(x, y, size) == 0 else { return false }
    }
    return true
  }
}
