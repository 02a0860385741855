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
/// It also remembers the last four values of copy-on-write messages that hold a string or a
/// list (``ProtoStorageMessage``) decoded at a field of their own type (``message(_:as:)``):
/// a later such field whose C message `matches(cMessage:)` one of them is that value, its
/// storage shared (a retain, not an allocation per storage, array and long string). They are
/// kept as their storage objects with their type's identifier, so no value is boxed and no
/// dynamic cast is made.
///
/// Four entries, replaced in turn. A string is compared with an entry only when their lengths
/// agree, then byte for byte (memcmp): no hashing, no table, no thread-local lookup (an
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

    @inlinable func holds(_ p: UnsafePointer<CChar>, _ count: Int) -> Bool {
      guard count == self.count, let bytes else { return false }
      return memcmp(p, bytes, count) == 0
    }
  }

  @usableFromInline var e0 = Entry(nil, 0, "")
  @usableFromInline var e1 = Entry(nil, 0, "")
  @usableFromInline var e2 = Entry(nil, 0, "")
  @usableFromInline var e3 = Entry(nil, 0, "")
  /// The entry the next new long string replaces.
  @usableFromInline var next = 0

  /// One remembered message: its type and its storage.
  @usableFromInline struct Recent {
    @usableFromInline var type: ObjectIdentifier?
    @usableFromInline var storage: AnyObject?

    @inlinable init(_ type: ObjectIdentifier?, _ storage: AnyObject?) {
      self.type = type
      self.storage = storage
    }

    @inlinable func recall<M: ProtoStorageMessage>(_ p: UnsafePointer<M.CMessage>) -> M? {
      guard type == ObjectIdentifier(M.self), let storage else { return nil }
      let held = M(sharedStorage: storage)
      return held.matches(cMessage: p) ? held : nil
    }
  }

  @usableFromInline var m0 = Recent(nil, nil)
  @usableFromInline var m1 = Recent(nil, nil)
  @usableFromInline var m2 = Recent(nil, nil)
  @usableFromInline var m3 = Recent(nil, nil)
  /// The message entry the next decoded message replaces.
  @usableFromInline var nextMessage = 0

  @inlinable @_spi(GeneratedCode) public init() {}

  /// The message at `p`: one remembered that matches it, else decoded (and remembered).
  @inlinable @_spi(GeneratedCode) public mutating func message<M: ProtoStorageMessage>(
    _ p: UnsafePointer<M.CMessage>, as _: M.Type
  ) throws(ProtoDecodingError) -> M {
    if let held: M = m0.recall(p) { return held }
    if let held: M = m1.recall(p) { return held }
    if let held: M = m2.recall(p) { return held }
    if let held: M = m3.recall(p) { return held }
    let decoded = try M(cMessage: p, strings: &self)
    let entry = Recent(ObjectIdentifier(M.self), decoded.sharedStorage)
    switch nextMessage {
    case 0: m0 = entry
    case 1: m1 = entry
    case 2: m2 = entry
    default: m3 = entry
    }
    nextMessage = (nextMessage + 1) & 3
    return decoded
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
    if e0.holds(p, count) { return e0.string }
    if e1.holds(p, count) { return e1.string }
    if e2.holds(p, count) { return e2.string }
    if e3.holds(p, count) { return e3.string }
    let s = try ProtoC.string(p)
    let entry = Entry(p, count, s)
    switch next {
    case 0: e0 = entry
    case 1: e1 = entry
    case 2: e2 = entry
    default: e3 = entry
    }
    next = (next + 1) & 3
    return s
  }
}
