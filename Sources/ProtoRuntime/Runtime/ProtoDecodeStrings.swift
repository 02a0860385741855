// Public: strlen and memcmp appear in the @inlinable bodies below.
#if canImport(Glibc)
  public import Glibc
#elseif canImport(Musl)
  public import Musl
#endif

/// The long strings one decode has built so far, so that the same bytes met again in the same
/// decode give the same `String` (a retain) instead of a new allocation and UTF-8 check.
///
/// A Trip repeats its long strings: each terminal location holds its place ID twice (the
/// deprecated `value` and `place_id`), each waypoint and its traffic the same encoded paths,
/// `vehicle_waypoints` repeat `remaining_waypoints`. Swift keeps strings of up to 15 UTF-8
/// bytes inline, without an allocation, so only longer ones are remembered.
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

  @inlinable @_spi(GeneratedCode) public init() {}

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
