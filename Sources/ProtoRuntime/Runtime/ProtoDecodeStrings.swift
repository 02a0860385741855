// Public: strlen and memcmp appear in the @inlinable bodies below.
#if canImport(Glibc)
  public import Glibc
#elseif canImport(Musl)
  public import Musl
#endif

/// The long strings one decode has built so far, so that the same bytes met again in the same
/// decode give the same `String` (a retain) instead of a new allocation and UTF-8 check; and
/// its last copy-on-write messages, likewise (below).
///
/// A Trip repeats its long strings: each terminal location holds its place ID twice (the
/// deprecated `value` and `place_id`), each waypoint and its traffic the same encoded paths,
/// `vehicle_waypoints` repeat `remaining_waypoints`. Swift keeps strings of up to 15 UTF-8
/// bytes inline, without an allocation, so only longer ones are remembered.
///
/// It also remembers the last eight values of copy-on-write messages that hold a string or a
/// list (``ProtoStorageMessage``) decoded at a field of their own type (``message(_:as:)``):
/// a later such field whose C message `matches(cMessage:)` one of them is that value, its
/// storage shared (a retain, not an allocation per storage, array and long string). They are
/// kept as their storage objects with their type's identifier, so no value is boxed and no
/// dynamic cast is made.
///
/// Each kind has eight entries, replaced in turn (one ``ProtoRecentRing`` each). A string is
/// compared with an entry only when their lengths agree, then byte for byte (memcmp): no
/// hashing, no table, no thread-local lookup (an
/// earlier per-thread cache cost more than the mallocs it saved, 9082048). One value lives on
/// the stack of one decode (``CBridgedMessage/decodeThroughC(_:)``) and is handed down
/// `inout`; the pointers it keeps are into protobuf-c's unpacked tree, valid while that
/// decode runs, and it must not outlive it.
@_spi(GeneratedCode) public struct ProtoDecodeStrings {
  @usableFromInline struct Entry {
    @usableFromInline var bytes: UnsafePointer<CChar>?
    @usableFromInline var count: Int
    @usableFromInline var string: String

    @inlinable init(_ bytes: UnsafePointer<CChar>?, _ count: Int, _ string: String) {
      self.bytes = bytes
      self.count = count
      self.string = string
    }

    @inlinable func holds(_ p: UnsafePointer<CChar>, _ count: Int) -> String? {
      guard count == self.count, let bytes, memcmp(p, bytes, count) == 0 else { return nil }
      return string
    }
  }

  @usableFromInline var strings = ProtoRecentRing(Entry(nil, 0, ""))

  /// One remembered message: its type and its storage.
  @usableFromInline struct Recent {
    @usableFromInline var type: ObjectIdentifier?
    @usableFromInline var storage: AnyObject?
    /// The wire bytes it was decoded from, in a decode straight from the wire.
    @usableFromInline var bytes: UnsafeRawBufferPointer?

    @inlinable init(
      _ type: ObjectIdentifier?, _ storage: AnyObject?, _ bytes: UnsafeRawBufferPointer? = nil
    ) {
      self.type = type
      self.storage = storage
      self.bytes = bytes
    }

    @inlinable func recall<M: ProtoStorageMessage>(wire data: UnsafeRawBufferPointer) -> M? {
      guard type == ObjectIdentifier(M.self), let storage, ProtoReader.same(data, bytes) else {
        return nil
      }
      return M(sharedStorage: storage)
    }

    @inlinable func recall<M: ProtoStorageMessage>(_ p: UnsafePointer<M.CMessage>) -> M? {
      guard type == ObjectIdentifier(M.self), let storage else { return nil }
      let held = M(sharedStorage: storage)
      return held.matches(cMessage: p) ? held : nil
    }
  }

  @usableFromInline var messages = ProtoRecentRing(Recent(nil, nil))

  /// How many messages of recursive types (one that can hold its own type) the decode is in.
  @usableFromInline var depth = 0
  /// Whether the decode went deeper than ``depthLimit``.
  @_spi(GeneratedCode) public private(set) var tooDeep = false

  /// How deep a straight decode nests messages of recursive types: Google's protobuf's
  /// default recursion limit. protobuf-c has none: it recurses on the C stack, and bytes
  /// nested deep enough (a 1 MB message holds 250,000 levels) overflow it; ours would too.
  /// Deeper bytes are refused as malformed (``CBridgedMessage/decodeFromWire(_:)``), never
  /// handed to protobuf-c; its verdict differs only for 101 to some thousands of levels,
  /// which it decodes while its stack lasts.
  ///
  /// Two checks hold it. The straight decode counts the levels of recursive types and throws
  /// at the first past the limit. Whatever makes it throw earlier in wire order (an invalid
  /// UTF-8 string, a message field sent twice, both left to protobuf-c) would hand the rest,
  /// however deep, to protobuf-c: so before that, a message that can hold a recursive type
  /// (``CBridgedMessage/reachesRecursiveType``) is scanned without recursion
  /// (``ProtoReader/nests(_:deeperThan:)``), every length-delimited level counted, as Google's
  /// limit counts them, and refused past this many.
  @_spi(GeneratedCode) public static var depthLimit: Int { 100 }

  /// Entering a message of a recursive type: throws past ``depthLimit`` levels.
  @inlinable @_spi(GeneratedCode) public mutating func enter() throws(ProtoDecodingError) {
    depth += 1
    guard depth <= Self.depthLimit else { throw refuseDeeper() }
  }

  @usableFromInline mutating func refuseDeeper() -> ProtoDecodingError {
    tooDeep = true
    return ProtoDecodingError(message: "", reason: .malformed, byteCount: 0)
  }

  /// Leaving a message ``enter()`` entered.
  @inlinable @_spi(GeneratedCode) public mutating func leave() { depth -= 1 }

  @inlinable @_spi(GeneratedCode) public init() {}

  /// The message at `p`: one remembered that matches it, else decoded (and remembered).
  @inlinable @_spi(GeneratedCode) public mutating func message<M: ProtoStorageMessage>(
    _ p: UnsafePointer<M.CMessage>, as _: M.Type
  ) throws(ProtoDecodingError) -> M {
    if let held: M = messages.first({ $0.recall(p) }) { return held }
    let decoded = try M(cMessage: p, strings: &self)
    messages.add(Recent(ObjectIdentifier(M.self), decoded.sharedStorage))
    return decoded
  }

  /// The message whose wire bytes are `data`: one remembered that was decoded from the same
  /// bytes, else decoded (and remembered).
  @inlinable @_spi(GeneratedCode) public mutating func message<M: ProtoStorageMessage>(
    wire data: UnsafeRawBufferPointer, as _: M.Type
  ) throws(ProtoDecodingError) -> M {
    if let held: M = messages.first({ $0.recall(wire: data) }) { return held }
    let decoded = try M(wireBytes: data, strings: &self)
    messages.add(Recent(ObjectIdentifier(M.self), decoded.sharedStorage, data))
    return decoded
  }

  /// A string field whose data is `data`, read as the bridge reads the C string protobuf-c
  /// copies it into: cut at its first NUL, then UTF-8 checked (`.invalidUTF8`); the same bytes
  /// give an equal string, a long one the String already built.
  @inlinable @_spi(GeneratedCode) public mutating func string(_ data: UnsafeRawBufferPointer)
    throws(ProtoDecodingError) -> String
  {
    guard let base = data.baseAddress, !data.isEmpty else { return "" }
    let count = memchr(base, 0, data.count).map { UnsafeRawPointer($0) - base } ?? data.count
    guard count > Self.smallLimit else { return try Self.validated(base, count) }
    let p = base.assumingMemoryBound(to: CChar.self)
    if let held = strings.first({ $0.holds(p, count) }) { return held }
    let s = try Self.validated(base, count)
    strings.add(Entry(p, count, s))
    return s
  }

  @inlinable static func validated(_ p: UnsafeRawPointer, _ count: Int)
    throws(ProtoDecodingError) -> String
  {
    guard count > 0 else { return "" }
    let utf8 = UnsafeBufferPointer(start: p.assumingMemoryBound(to: UInt8.self), count: count)
    // ASCII is valid UTF-8 as it is, and `String(decoding:)` builds it without the stdlib's
    // generic `_validate` (a swift_getGenericMetadata lookup per string: 13 % of a Trip's
    // decode, issue 37). Every string of a Trip is ASCII.
    if isASCII(p, count) { return String(decoding: utf8, as: UTF8.self) }
    guard let s = String(validating: utf8, as: UTF8.self) else {
      throw ProtoDecodingError(message: "", reason: .invalidUTF8, byteCount: 0)
    }
    return s
  }

  /// Whether the `count` bytes at `p` are all below 0x80, eight at a time.
  @inlinable static func isASCII(_ p: UnsafeRawPointer, _ count: Int) -> Bool {
    var i = 0
    var high: UInt64 = 0
    while i + 8 <= count {
      high |= p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
      i += 8
    }
    while i < count {
      high |= UInt64(p.load(fromByteOffset: i, as: UInt8.self))
      i += 1
    }
    return high & 0x8080_8080_8080_8080 == 0
  }

  /// Swift's limit for a string stored inline (UTF-8 bytes, 64-bit platforms).
  @usableFromInline static var smallLimit: Int { 15 }

  /// The C string `p` as a Swift string, ``ProtoC/string(_:)``'s result: the same bytes give
  /// an equal string, invalid UTF-8 throws `.invalidUTF8`.
  @inlinable @_spi(GeneratedCode) public mutating func string(_ p: UnsafePointer<CChar>?)
    throws(ProtoDecodingError) -> String
  {
    guard let p, p.pointee != 0 else { return "" }
    let count = strlen(p)
    guard count > Self.smallLimit else { return try ProtoC.string(p) }
    return try long(p, count)
  }

  @inlinable mutating func long(_ p: UnsafePointer<CChar>, _ count: Int)
    throws(ProtoDecodingError) -> String
  {
    if let held = strings.first({ $0.holds(p, count) }) { return held }
    let s = try ProtoC.string(p)
    strings.add(Entry(p, count, s))
    return s
  }
}

/// Eight values, the oldest replaced by the next one added: what ``ProtoDecodeStrings``
/// remembers of each kind. Stored properties rather than an array: no allocation, and the
/// lookups unroll. Eight, not four: a decode straight from the wire meets a Trip's fields in
/// number order, and a waypoint's stop (field 24's location) comes after the pickup point's
/// place ID (field 5) by more than four long strings (issue 37).
@usableFromInline struct ProtoRecentRing<Element> {
  @usableFromInline var e0: Element
  @usableFromInline var e1: Element
  @usableFromInline var e2: Element
  @usableFromInline var e3: Element
  @usableFromInline var e4: Element
  @usableFromInline var e5: Element
  @usableFromInline var e6: Element
  @usableFromInline var e7: Element
  /// The entry the next value added replaces.
  @usableFromInline var next = 0

  /// Eight copies of `empty`, a value no lookup finds anything in.
  @inlinable init(_ empty: Element) {
    (e0, e1, e2, e3) = (empty, empty, empty, empty)
    (e4, e5, e6, e7) = (empty, empty, empty, empty)
  }

  /// The first non-nil result of `found` over the entries, in slot order.
  @inlinable func first<Result>(_ found: (Element) -> Result?) -> Result? {
    if let r = found(e0) { return r }
    if let r = found(e1) { return r }
    if let r = found(e2) { return r }
    if let r = found(e3) { return r }
    if let r = found(e4) { return r }
    if let r = found(e5) { return r }
    if let r = found(e6) { return r }
    return found(e7)
  }

  @inlinable mutating func add(_ value: Element) {
    switch next {
    case 0: e0 = value
    case 1: e1 = value
    case 2: e2 = value
    case 3: e3 = value
    case 4: e4 = value
    case 5: e5 = value
    case 6: e6 = value
    default: e7 = value
    }
    next = (next + 1) & 7
  }
}
