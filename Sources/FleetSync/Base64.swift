/// Base64 (RFC 4648 §4, the standard alphabet) as gRPC uses it for `-bin` metadata and
/// `grpc-status-details-bin`.
///
/// gRPC's PROTOCOL-HTTP2.md: "Implementations MUST accept padded and un-padded values and
/// should emit un-padded values." Foundation's `Data(base64Encoded:)` rejects unpadded input,
/// and these run on every call that carries binary metadata, so this is our own: one
/// allocation per call, no Foundation. The package's JSON Web Tokens and share links use it
/// too, with the URL-safe alphabet (base64url, RFC 4648 §5): it lives here, below GRPCWire,
/// so that they do not reach into GRPCWire's package symbols for it.
public enum Base64 {
  /// The 64 characters: the standard one (`+`, `/`) or base64url's (`-`, `_`).
  public enum Alphabet: Sendable {
    case standard
    case url

    fileprivate var characters: [UInt8] {
      switch self {
      case .standard: Base64.standardCharacters
      case .url: Base64.urlCharacters
      }
    }

    fileprivate var decodeTable: [UInt8] {
      switch self {
      case .standard: Base64.standardDecodeTable
      case .url: Base64.urlDecodeTable
      }
    }
  }

  /// `bytes` encoded with `alphabet` (default the standard one) and without `=` padding.
  public static func encodeUnpadded(
    _ bytes: some Collection<UInt8>, alphabet: Alphabet = .standard
  ) -> String {
    let alphabet = alphabet.characters
    let count = bytes.count
    if count == 0 { return "" }
    // Without padding a trailing group of 1 or 2 bytes takes 2 or 3 characters.
    let remainder = count % 3
    let encodedCount = (count / 3) * 4 + (remainder == 0 ? 0 : remainder + 1)
    return String(unsafeUninitializedCapacity: encodedCount) { output in
      var out = 0
      var iterator = bytes.makeIterator()
      while let b0 = iterator.next() {
        let b1 = iterator.next()
        let b2 = iterator.next()
        output[out] = alphabet[Int(b0 >> 2)]
        output[out + 1] = alphabet[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)]
        out += 2
        guard let b1 else { break }
        output[out] = alphabet[Int((b1 & 0x0F) << 2 | (b2 ?? 0) >> 6)]
        out += 1
        guard let b2 else { break }
        output[out] = alphabet[Int(b2 & 0x3F)]
        out += 1
      }
      return out
    }
  }

  /// The bytes `text` encodes, with or without `=` padding; nil when it is not Base64.
  ///
  /// Rejects characters outside the standard alphabet (including whitespace and the URL-safe
  /// `-` and `_`), `=` anywhere but the end, more than two `=`, and a length that leaves a
  /// single dangling character. Unused low bits of the last character are ignored, as most
  /// decoders do.
  /// With `alphabet` `.url`, the same rules hold for base64url's characters.
  public static func decode(
    _ text: some StringProtocol, alphabet: Alphabet = .standard
  ) -> [UInt8]? {
    let table = alphabet.decodeTable
    let utf8 = text.utf8
    if let result = utf8.withContiguousStorageIfAvailable({ decode(bytes: $0, table) }) {
      return result
    }
    return Array(utf8).withUnsafeBufferPointer { decode(bytes: $0, table) }
  }

  private static func decode(
    bytes input: UnsafeBufferPointer<UInt8>, _ decodeTable: [UInt8]
  ) -> [UInt8]? {
    var end = input.count
    // Up to two '=' of padding; whatever padding there is, the data before it decides.
    for _ in 0..<2 where end > 0 && input[end - 1] == UInt8(ascii: "=") { end -= 1 }
    let remainder = end % 4
    if remainder == 1 { return nil }
    if end == 0 { return input.isEmpty ? [] : nil }
    // Padding, when present, must complete the last group of four exactly: "QQ==" and "QQ"
    // are both fine, "QQ=" is neither padded nor unpadded.
    if end != input.count, input.count % 4 != 0 { return nil }

    let outputCount = (end / 4) * 3 + (remainder == 0 ? 0 : remainder - 1)
    var invalid = false
    let result = [UInt8](unsafeUninitializedCapacity: outputCount) { output, initialized in
      var accumulator: UInt32 = 0
      var bits = 0
      var out = 0
      for index in 0..<end {
        let value = decodeTable[Int(input[index])]
        if value == 0xFF {
          invalid = true
          break
        }
        accumulator = accumulator << 6 | UInt32(value)
        bits += 6
        if bits >= 8 {
          bits -= 8
          output[out] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
          out += 1
        }
      }
      initialized = invalid ? 0 : out
    }
    return invalid ? nil : result
  }

  private static let standardCharacters: [UInt8] = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
  private static let urlCharacters: [UInt8] = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
  private static let standardDecodeTable = decodeTable(standardCharacters)
  private static let urlDecodeTable = decodeTable(urlCharacters)

  // 0xFF marks a byte that is not in the alphabet; '=' is handled before the table is used.
  private static func decodeTable(_ characters: [UInt8]) -> [UInt8] {
    var table = [UInt8](repeating: 0xFF, count: 256)
    for (index, character) in characters.enumerated() { table[Int(character)] = UInt8(index) }
    return table
  }
}
