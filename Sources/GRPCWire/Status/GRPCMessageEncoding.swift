/// The percent-encoding of the `grpc-message` trailer (PROTOCOL-HTTP2.md, "Status-Message").
///
/// The message is Unicode text sent as UTF-8 and then percent-encoded: space and the visible
/// ASCII characters except `%` go as they are, every other byte as `%XX`.
package enum GRPCMessageEncoding {
  /// `message` ready for `grpc-message`: bytes 0x20–0x7E except `%` kept, every other UTF-8
  /// byte written as `%XX` (upper-case hex). Returns `message` itself, without copying, when
  /// nothing needs escaping.
  package static func percentEncode(_ message: String) -> String {
    let utf8 = message.utf8
    let escapedCount = utf8.reduce(0) { $0 + (isUnreserved($1) ? 0 : 1) }
    if escapedCount == 0 { return message }
    return String(unsafeUninitializedCapacity: utf8.count + 2 * escapedCount) { output in
      var out = 0
      for byte in utf8 {
        if isUnreserved(byte) {
          output[out] = byte
          out += 1
        } else {
          output[out] = UInt8(ascii: "%")
          output[out + 1] = hexDigits[Int(byte >> 4)]
          output[out + 2] = hexDigits[Int(byte & 0x0F)]
          out += 3
        }
      }
      return out
    }
  }

  /// The message a `grpc-message` value stands for; never fails.
  ///
  /// `%XX` (hex digits in either case) becomes byte XX; a `%` not followed by two hex digits is
  /// kept literally, as the spec allows ("decode valid portions while leaving broken
  /// %-encodings as-is"). Bytes that do not form valid UTF-8 become U+FFFD. A value without
  /// `%` is returned as it is.
  package static func percentDecode(_ value: some StringProtocol) -> String {
    // One call into the generic view, then plain loops over bytes: this runs on every failed
    // call, and most messages have nothing to decode.
    let decoded =
      value.utf8.withContiguousStorageIfAvailable(decode(bytes:))
      ?? Array(value.utf8).withUnsafeBufferPointer(decode(bytes:))
    if let decoded { return decoded }
    if let string = value as? String { return string }
    return String(decoding: value.utf8, as: UTF8.self)
  }

  /// The decoded message; nil when `input` has no '%' and so is its own decoding.
  private static func decode(bytes input: UnsafeBufferPointer<UInt8>) -> String? {
    guard input.contains(UInt8(ascii: "%")) else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(input.count)
    var index = 0
    while index < input.count {
      let byte = input[index]
      index += 1
      // A '%' followed by two hex digits is an escape; any other '%' stays as it is.
      if byte == UInt8(ascii: "%"), index + 1 < input.count,
        let high = hexValue(input[index]), let low = hexValue(input[index + 1])
      {
        bytes.append(high << 4 | low)
        index += 2
      } else {
        bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func isUnreserved(_ byte: UInt8) -> Bool {
    byte >= 0x20 && byte <= 0x7E && byte != UInt8(ascii: "%")
  }

  private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

  /// The value of a hex digit (either case); nil for any other byte. Also for the proxy URL's
  /// percent-escapes and the service config's `\u` escapes.
  static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    // A switch over a byte cannot list every value; the rest are not hex digits.
    default: nil
    }
  }
}
