/// The custom metadata of a gRPC call: ordered key–value pairs sent as HTTP/2 headers (request
/// metadata, a response's initial metadata) or trailers.
///
/// Keys are case-insensitive and stored lowercased. A key ending in `-bin` holds binary values
/// (sent base64-encoded); any other key holds ASCII strings. One key may have several values;
/// they keep the order they were added in, and so does the whole collection. Two metadata
/// values are equal when they hold the same pairs in the same order.
///
/// Adding never fails and never traps, whatever the key or value: call ``validate()`` before
/// sending (the call layer does) to get a ``MetadataError`` that names a bad key. Pseudo-headers
/// and the names gRPC and HTTP/2 reserve for themselves are never sent; see ``headerFields()``.
///
/// `description` masks the values of credential-carrying keys such as `authorization`, so
/// metadata can be logged without leaking tokens.
public struct Metadata: Sendable, Hashable {
  /// One metadata value: ASCII text, or bytes for a `-bin` key.
  public enum Value: Sendable, Hashable {
    /// Printable ASCII (space to `~`) for an ordinary key.
    case string(String)
    /// Raw bytes for a key ending in `-bin`.
    case binary([UInt8])
  }

  struct Entry: Sendable, Hashable {
    var key: String
    var value: Value
  }

  // Internal read access so the other Metadata files can loop without the tuple iterator.
  private(set) var entries: [Entry] = []

  /// Empty metadata.
  public init() {}

  /// Whether there are no pairs at all.
  public var isEmpty: Bool { entries.isEmpty }

  /// The number of key–value pairs (a key with three values counts three times).
  public var count: Int { entries.count }

  /// Appends `value` under `key` (lowercased).
  ///
  /// A `-bin` key keeps binary values only, so a string added under one is stored as
  /// `.binary` of its UTF-8 bytes and sent base64-encoded; read it back with
  /// ``firstBinary(_:)``. Invalid keys and characters are accepted here and reported by
  /// ``validate()``.
  public mutating func add(_ key: String, _ value: String) {
    let key = Self.normalized(key)
    if Self.isBinaryKey(key) {
      entries.append(Entry(key: key, value: .binary(Array(value.utf8))))
    } else {
      entries.append(Entry(key: key, value: .string(value)))
    }
  }

  /// Appends binary `value` under `key` (lowercased), which should end in `-bin`.
  ///
  /// Under any other key the pair is kept but ``validate()`` reports it, since HTTP/2 cannot
  /// carry raw bytes in an ordinary header.
  public mutating func add(_ key: String, binary value: [UInt8]) {
    entries.append(Entry(key: Self.normalized(key), value: .binary(value)))
  }

  /// Appends `value` under `key`; a `.string` goes through ``add(_:_:)-(String,String)``, a
  /// `.binary` through ``add(_:binary:)``.
  public mutating func add(_ key: String, _ value: Value) {
    switch value {
    case .string(let text): add(key, text)
    case .binary(let bytes): add(key, binary: bytes)
    }
  }

  /// Appends every pair of `other`, in order.
  public mutating func add(contentsOf other: Metadata) {
    entries.append(contentsOf: other.entries)
  }

  /// Removes every value of `key`.
  public mutating func removeAll(_ key: String) {
    let key = Self.normalized(key)
    entries.removeAll { $0.key == key }
  }

  /// All values of `key`, in the order they were added; empty when there are none.
  public subscript(_ key: String) -> [Value] {
    let key = Self.normalized(key)
    return entries.compactMap { $0.key == key ? $0.value : nil }
  }

  /// The first string value of `key`, or nil. A `-bin` key has no string values.
  public func first(_ key: String) -> String? {
    let key = Self.normalized(key)
    for entry in entries where entry.key == key {
      if case .string(let text) = entry.value { return text }
    }
    return nil
  }

  /// The first binary value of `key`, or nil.
  public func firstBinary(_ key: String) -> [UInt8]? {
    let key = Self.normalized(key)
    for entry in entries where entry.key == key {
      if case .binary(let bytes) = entry.value { return bytes }
    }
    return nil
  }

  // MARK: Keys

  /// `key` lowercased; returns the same string (no allocation) when it has no uppercase ASCII,
  /// which is every key on the receive path since HTTP/2 field names are lowercase.
  static func normalized(_ key: String) -> String {
    allBytes(of: key) { $0 < UInt8(ascii: "A") || $0 > UInt8(ascii: "Z") } ? key : key.lowercased()
  }

  /// Appends a pair whose key is already normalized and whose value already matches it.
  mutating func append(normalizedKey key: String, _ value: Value) {
    // Room for a few at the first: a call's metadata is usually two or three entries, which
    // growing one by one allocated twice.
    if entries.capacity == 0 { entries.reserveCapacity(4) }
    entries.append(Entry(key: key, value: value))
  }

  /// Whether every UTF-8 byte of `text` satisfies `predicate`; scans contiguous storage
  /// directly, which native and small strings always have.
  static func allBytes(of text: String, _ predicate: (UInt8) -> Bool) -> Bool {
    text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(predicate) }
      ?? text.utf8.allSatisfy(predicate)
  }

  /// Whether `key` names binary metadata (ends in `-bin`); compares bytes, not Characters.
  static func isBinaryKey(_ key: some StringProtocol) -> Bool {
    let utf8 = key.utf8
    guard utf8.count >= 4 else { return false }
    return utf8.suffix(4).elementsEqual("-bin".utf8)
  }
}

extension Metadata: Sequence {
  /// Each key–value pair, in order.
  public struct Iterator: IteratorProtocol {
    var base: IndexingIterator<[Entry]>

    /// The next pair, or nil after the last.
    public mutating func next() -> (key: String, value: Value)? {
      base.next().map { (key: $0.key, value: $0.value) }
    }
  }

  /// An iterator over the pairs, in order.
  public func makeIterator() -> Iterator {
    Iterator(base: entries.makeIterator())
  }

  /// The number of pairs; see ``count``.
  public var underestimatedCount: Int { entries.count }
}

extension Metadata: ExpressibleByDictionaryLiteral {
  /// Metadata from a literal, in the literal's order; repeated keys are allowed and each value
  /// is added as by ``add(_:_:)-(String,Value)``.
  public init(dictionaryLiteral elements: (String, Value)...) {
    entries.reserveCapacity(elements.count)
    for (key, value) in elements { add(key, value) }
  }
}

extension Metadata.Value: ExpressibleByStringLiteral {
  /// A `.string` value from a literal.
  public init(stringLiteral value: String) {
    self = .string(value)
  }
}

extension Metadata.Value: CustomStringConvertible {
  /// The text itself, or the byte count of a binary value.
  public var description: String {
    switch self {
    case .string(let text): text
    case .binary(let bytes): "<\(bytes.count) bytes>"
    }
  }
}

extension Metadata: CustomStringConvertible {
  /// Keys that carry credentials; their values never appear in `description`.
  private static let maskedKeys: Set<String> = [
    "authorization", "proxy-authorization", "cookie", "set-cookie", "x-goog-api-key",
    "x-api-key", "x-firebase-appcheck",
  ]

  /// `[key: value, …]` in order, with credentials shown as `<masked>` and binary values as
  /// their byte count.
  public var description: String {
    let pairs = entries.map { entry in
      let shown = Self.maskedKeys.contains(entry.key) ? "<masked>" : entry.value.description
      return "\(entry.key): \(shown)"
    }
    return "[\(pairs.joined(separator: ", "))]"
  }
}
