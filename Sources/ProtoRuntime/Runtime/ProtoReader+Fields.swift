#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What a generated decode straight from the wire (`init(wireBytes:strings:)`) reads a known
/// field with: the value of one field of a given wire type, checked as protobuf-c 1.4's
/// `parse_required_member` and `parse_packed_repeated_member` check it (protobuf-c.c).
///
/// A wrong wire type throws, as protobuf-c's unpack fails, except for a bool, which
/// protobuf-c does not check. The straight decode is never more lenient than protobuf-c's
/// unpack with the bridge; where it is stricter, or meets something it does not reproduce
/// (a message field seen twice, which protobuf-c merges), it throws and the caller decodes
/// through protobuf-c instead (``CBridgedMessage/decodeFromWire(_:)``), whose verdict and
/// value are then the answer.
extension ProtoReader {
  /// A value that the straight decode leaves to protobuf-c: thrown like a malformed input.
  @inlinable @_spi(GeneratedCode) public static func leftToProtobufC() -> ProtoDecodingError {
    malformed()
  }

  /// Throws unless a known field's wire type is the one its type is written with.
  @inlinable static func expect(_ wireType: UInt8, _ expected: UInt8)
    throws(ProtoDecodingError)
  {
    guard wireType == expected else { throw malformed() }
  }

  /// A field's value of wire type 0 (varint), 5 (fixed 32 bits), 1 (fixed 64 bits) or 2 (its
  /// data, after the length prefix: a string's, bytes' or message's), for a field whose tag
  /// says `wireType`: any other throws.
  @inlinable @_spi(GeneratedCode) public mutating func varint(_ wireType: UInt8)
    throws(ProtoDecodingError) -> UInt64 { try Self.expect(wireType, 0); return try varint() }

  @inlinable @_spi(GeneratedCode) public mutating func fixed32(_ wireType: UInt8)
    throws(ProtoDecodingError) -> UInt32 { try Self.expect(wireType, 5); return try fixed32() }

  @inlinable @_spi(GeneratedCode) public mutating func fixed64(_ wireType: UInt8)
    throws(ProtoDecodingError) -> UInt64 { try Self.expect(wireType, 1); return try fixed64() }

  @inlinable @_spi(GeneratedCode) public mutating func delimited(_ wireType: UInt8)
    throws(ProtoDecodingError) -> UnsafeRawBufferPointer
  {
    try Self.expect(wireType, 2)
    return try lengthDelimited()
  }

  /// A bool of any wire type, as protobuf-c's `parse_boolean` reads it: true when any byte
  /// after the tag (for wire type 2, the length prefix included) has one of its low 7 bits set.
  @inlinable @_spi(GeneratedCode) public mutating func bool(_ wireType: UInt8)
    throws(ProtoDecodingError) -> Bool
  {
    let bytes = try skip(wireType: wireType)
    for byte in bytes where byte & 0x7f != 0 { return true }
    return false
  }

  /// protobuf-c's `unzigzag32` of a varint's low 32 bits.
  @inlinable @_spi(GeneratedCode) public static func zigzag32(_ value: UInt64) -> Int32 {
    let v = UInt32(truncatingIfNeeded: value)
    return Int32(bitPattern: (v >> 1) ^ (0 &- (v & 1)))
  }

  @inlinable @_spi(GeneratedCode) public static func zigzag64(_ value: UInt64) -> Int64 {
    Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
  }

  /// A bytes field's value: a copy of `data`.
  @inlinable @_spi(GeneratedCode) public static func bytes(_ data: UnsafeRawBufferPointer)
    -> [UInt8]
  {
    data.isEmpty ? [] : Array(data.bindMemory(to: UInt8.self))
  }

  /// Keeps the field whose tag was just read as unknown, its bytes as they came.
  @inlinable @_spi(GeneratedCode) public mutating func unknown(
    _ tag: (number: UInt32, wireType: UInt8), into unknown: inout ProtoUnknownFields
  ) throws(ProtoDecodingError) {
    let bytes = try skip(wireType: tag.wireType)
    unknown.fields.append(
      ProtoUnknownFields.Field(
        number: tag.number, wireType: tag.wireType, bytes: Self.bytes(bytes)))
  }

  // MARK: Packed repeated scalars

  /// A packed run of varints (int32, int64, uint32, uint64, sint32, sint64, enum), appended to
  /// `list`: room for as many as protobuf-c counts (`max_b128_numbers`), each varint of at most
  /// 10 bytes and ending inside the run.
  @inlinable @_spi(GeneratedCode) public mutating func appendPackedVarints<T>(
    to list: inout [T], _ convert: (UInt64) -> T
  ) throws(ProtoDecodingError) {
    var run = ProtoReader(try lengthDelimited())
    var count = 0
    var p = run.position
    while p < run.end {
      if p.pointee & 0x80 == 0 { count += 1 }
      p += 1
    }
    list.reserveCapacity(list.count + count)
    while !run.isAtEnd { list.append(convert(try run.varint())) }
  }

  /// A packed run of 32-bit values (fixed32, sfixed32, float): a multiple of 4 bytes.
  @inlinable @_spi(GeneratedCode) public mutating func appendPacked32<T>(
    to list: inout [T], _ convert: (UInt32) -> T
  ) throws(ProtoDecodingError) { try appendPackedFixed(to: &list, convert) }

  /// A packed run of 64-bit values (fixed64, sfixed64, double): a multiple of 8 bytes.
  @inlinable @_spi(GeneratedCode) public mutating func appendPacked64<T>(
    to list: inout [T], _ convert: (UInt64) -> T
  ) throws(ProtoDecodingError) { try appendPackedFixed(to: &list, convert) }

  /// A packed run of little-endian `Raw` values, a multiple of their size in bytes, as
  /// protobuf-c's `count_packed_elements` requires.
  @inlinable mutating func appendPackedFixed<Raw: FixedWidthInteger, T>(
    to list: inout [T], _ convert: (Raw) -> T
  ) throws(ProtoDecodingError) {
    let run = try lengthDelimited()
    let size = MemoryLayout<Raw>.size
    guard run.count % size == 0 else { throw Self.malformed() }
    list.reserveCapacity(list.count + run.count / size)
    for offset in stride(from: 0, to: run.count, by: size) {
      let raw = run.loadUnaligned(fromByteOffset: offset, as: Raw.self)
      list.append(convert(Raw(littleEndian: raw)))
    }
  }

  /// A packed run of bools: one byte each, 0 or 1 (protobuf-c refuses any other byte).
  @inlinable @_spi(GeneratedCode) public mutating func appendPackedBools(to list: inout [Bool])
    throws(ProtoDecodingError)
  {
    let run = try lengthDelimited()
    list.reserveCapacity(list.count + run.count)
    for byte in run {
      guard byte <= 1 else { throw Self.malformed() }
      list.append(byte == 1)
    }
  }

  // MARK: Finding fields again

  /// How many fields numbered `number` follow from here, one after the other: the room a list
  /// reserves at its first element, so that it grows once. Every encoder writes a list's
  /// elements together, so this is all of them (protobuf-c counts them before it allocates);
  /// a list split by other fields grows again where it resumes. Counting only the run, not
  /// every field to the end, keeps it to the list's own tags (it scanned the rest of the
  /// message once per list: 5 % of a Trip's decode, issue 37). Stops at bytes it cannot frame
  /// (the decode throws there anyway).
  @inlinable @_spi(GeneratedCode) public func run(of number: UInt32) -> Int {
    var scan = self
    var count = 0
    while let tag = try? scan.nextTag(), tag.number == number,
      (try? scan.skip(wireType: tag.wireType)) != nil
    {
      count += 1
    }
    return count
  }

  /// The data of the first length-delimited field numbered `number` in `bytes`, nil when there
  /// is none (or `bytes` is nil).
  @inlinable @_spi(GeneratedCode) public static func first(
    _ number: UInt32, in bytes: UnsafeRawBufferPointer?
  ) -> UnsafeRawBufferPointer? {
    guard let bytes else { return nil }
    var cursor = ProtoFieldCursor(bytes, number)
    return cursor.next()
  }

  /// Whether `data` and `other` hold the same bytes: a sub-message whose bytes equal those an
  /// earlier value was decoded from decodes to that value (a decode is a function of its
  /// bytes), so it can share it.
  @inlinable @_spi(GeneratedCode) public static func same(
    _ data: UnsafeRawBufferPointer, _ other: UnsafeRawBufferPointer?
  ) -> Bool {
    guard let other, other.count == data.count else { return false }
    guard let a = data.baseAddress, let b = other.baseAddress else { return true }
    return a == b || memcmp(a, b, data.count) == 0
  }
}

/// Where one field number's occurrences are in the message a generated decode reads, noted
/// as its pass meets them: the first one's data (what a later field sharing its value compares
/// its bytes with) and the bytes from its tag to the last one's end (what a list read after
/// the pass, ``ProtoListSharing``, looks for its elements in). Found again by a scan from the
/// message's start, they cost 15 % of a Trip's decode (issue 37).
@_spi(GeneratedCode) public struct ProtoFieldSpan {
  /// The first occurrence's data; nil while none was met.
  @_spi(GeneratedCode) public var first: UnsafeRawBufferPointer?
  /// From the first occurrence's tag to the end of the last one's data.
  @_spi(GeneratedCode) public var bytes: UnsafeRawBufferPointer?

  @inlinable @_spi(GeneratedCode) public init() {}

  /// Notes the occurrence whose tag starts at `field` and whose data is `data`.
  @inlinable @_spi(GeneratedCode) public mutating func add(
    _ data: UnsafeRawBufferPointer, field: UnsafeRawPointer
  ) {
    let start = bytes?.baseAddress.map { UnsafeRawPointer($0) } ?? field
    if first == nil { first = data }
    let end = data.baseAddress.map { UnsafeRawPointer($0) + data.count } ?? field
    bytes = UnsafeRawBufferPointer(start: start, count: end - start)
  }
}

/// The length-delimited fields numbered `number` of one message's bytes, in order: the
/// elements of an earlier list, compared byte for byte with those of a later one.
@_spi(GeneratedCode) public struct ProtoFieldCursor {
  @usableFromInline var reader: ProtoReader
  @usableFromInline let number: UInt32

  @inlinable @_spi(GeneratedCode) public init(_ bytes: UnsafeRawBufferPointer?, _ number: UInt32)
  {
    reader = ProtoReader(bytes ?? UnsafeRawBufferPointer(start: nil, count: 0))
    self.number = number
  }

  /// The next such field's data; nil past the last one or at bytes that do not frame.
  @inlinable @_spi(GeneratedCode) public mutating func next() -> UnsafeRawBufferPointer? {
    while let tag = try? reader.nextTag() {
      guard tag.number == number, tag.wireType == 2 else {
        guard (try? reader.skip(wireType: tag.wireType)) != nil else { return nil }
        continue
      }
      return try? reader.lengthDelimited()
    }
    return nil
  }
}

/// A list decoded after an earlier list of its type in the same message, element by element
/// in wire order: while each element's bytes equal those of the earlier list's element at its
/// index, nothing is built (the earlier values are the list's); at the first that differs, the
/// list is the earlier prefix plus what follows, each later element still shared when its
/// bytes equal the earlier one's. A list that matched the earlier one to its end is the earlier
/// array itself (its buffer shared).
@_spi(GeneratedCode) public struct ProtoListSharing {
  @usableFromInline var cursor: ProtoFieldCursor
  /// Elements seen so far.
  @usableFromInline var count = 0
  /// Whether every element so far matched the earlier list's (and none was built).
  @usableFromInline var matching = true

  /// `bytes`: the message (or sub-message) holding the earlier list; `number`: its field.
  @inlinable @_spi(GeneratedCode) public init(_ bytes: UnsafeRawBufferPointer?, _ number: UInt32)
  {
    cursor = ProtoFieldCursor(bytes, number)
  }

  /// Adds the element whose bytes are `data` to `list`, decoding it with `decode` unless it
  /// can share `earlier`'s element at its index. `reader`, just past the element, and the
  /// list's field `number` tell how many elements may follow (the room the list reserves).
  @inlinable @_spi(GeneratedCode) public mutating func add<M>(
    _ data: UnsafeRawBufferPointer, to list: inout [M], earlier: [M],
    following reader: ProtoReader, number: UInt32,
    _ decode: (UnsafeRawBufferPointer) throws(ProtoDecodingError) -> M
  ) throws(ProtoDecodingError) {
    let index = count
    count += 1
    // The cursor steps to the earlier list's element at `index` whatever the comparison.
    let theirs = cursor.next()
    let same = index < earlier.count && ProtoReader.same(data, theirs)
    if matching {
      if same { return }
      matching = false
      list.reserveCapacity(index + 1 + reader.run(of: number))
      list.append(contentsOf: earlier[..<index])
    }
    list.append(same ? earlier[index] : try decode(data))
  }

  /// Reads the list numbered `number` of the message `bytes` into `list`, every element at
  /// once, after the rest of the message: `earlier`, decoded from the fields numbered
  /// `sourceNumber` of `source`, is then complete, whatever the order the fields came in (a
  /// Trip's route, field 9, shares the path of its first waypoint, field 16). The message's
  /// pass has checked each element's wire type and length already.
  @inlinable @_spi(GeneratedCode) public static func decode<M>(
    _ list: inout [M], _ bytes: UnsafeRawBufferPointer, _ number: UInt32, earlier: [M],
    in source: UnsafeRawBufferPointer?, _ sourceNumber: UInt32,
    _ decode: (UnsafeRawBufferPointer) throws(ProtoDecodingError) -> M
  ) throws(ProtoDecodingError) {
    try decodeEach(&list, bytes, number, earlier: earlier, in: source, sourceNumber, decode)
  }

  /// ``decode(_:_:_:earlier:in:_:_:)``'s work, element by element with cursors.
  @inlinable static func decodeEach<M>(
    _ list: inout [M], _ bytes: UnsafeRawBufferPointer, _ number: UInt32, earlier: [M],
    in source: UnsafeRawBufferPointer?, _ sourceNumber: UInt32,
    _ decode: (UnsafeRawBufferPointer) throws(ProtoDecodingError) -> M
  ) throws(ProtoDecodingError) {
    var sharing = ProtoListSharing(source, sourceNumber)
    var mine = ProtoFieldCursor(bytes, number)
    while let data = mine.next() {
      try sharing.add(
        data, to: &list, earlier: earlier, following: mine.reader, number: number, decode)
    }
    sharing.finish(&list, earlier: earlier)
  }

  /// The list once the message is read: `earlier` itself, or its prefix, when every element
  /// matched.
  @inlinable @_spi(GeneratedCode) public func finish<M>(_ list: inout [M], earlier: [M]) {
    guard matching, count > 0 else { return }
    list = count == earlier.count ? earlier : Array(earlier[..<count])
  }
}
