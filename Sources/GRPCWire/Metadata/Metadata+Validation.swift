extension Metadata {
  /// Checks that every pair can be sent as gRPC custom metadata; the call layer calls this
  /// before it sends anything.
  ///
  /// Throws for the first pair, in order, whose key is reserved (see ``isReserved(_:)``), is
  /// empty, uses a character outside `0-9 a-z _ - .`, or holds a binary value without
  /// ending in `-bin`; or whose string value holds a byte outside printable ASCII. Metadata
  /// built by ``init(receivedHeaders:)`` always passes.
  public func validate() throws(MetadataError) {
    for entry in entries {
      let key = entry.key
      // Reserved first: ":path" is better reported as reserved than as containing ':'.
      if Self.isReserved(key) { throw MetadataError(key: key, reason: .reservedKey) }
      if let reason = Self.keyProblem(key) { throw MetadataError(key: key, reason: reason) }
      switch entry.value {
      case .string(let text):
        if let reason = Self.valueProblem(text) { throw MetadataError(key: key, reason: reason) }
      case .binary:
        if !Self.isBinaryKey(key) {
          throw MetadataError(key: key, reason: .binaryValueForASCIIKey)
        }
      }
    }
  }

  /// What is wrong with a (lowercased) key by gRPC's grammar, PROTOCOL-HTTP2.md
  /// "Header-Name → 1*( %x30-39 / %x61-7A / "_" / "-" / ".")"; nil when nothing is.
  static func keyProblem(_ key: String) -> MetadataError.Reason? {
    if key.utf8.isEmpty { return .emptyKey }
    if allBytes(of: key, isKeyByte) { return nil }
    // Report the whole character, not one byte of its UTF-8 encoding.
    let bad = key.unicodeScalars.first { !($0.isASCII && isKeyByte(UInt8($0.value))) }
    return .invalidKeyCharacter(bad ?? "?")
  }

  private static func isKeyByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."):
      true
    // A switch over a byte cannot list every value; everything else is not allowed.
    default: false
    }
  }

  /// What is wrong with a string value, PROTOCOL-HTTP2.md "ASCII-Value → 1*( %x20-%x7E )";
  /// nil when nothing is. An empty value is accepted: peers send and accept them.
  static func valueProblem(_ value: String) -> MetadataError.Reason? {
    if allBytes(of: value, { $0 >= 0x20 && $0 <= 0x7E }) { return nil }
    // Only on failure: find where.
    var offset = 0
    for byte in value.utf8 {
      if byte < 0x20 || byte > 0x7E { return .invalidValueByte(byte, offset: offset) }
      offset += 1
    }
    return nil
  }
}
