/// JSON text written by hand, where an encoder's choices (key order, escaping) would change
/// bytes that someone relies on: the JWTs `ServiceAccountTokenProvider` signs, and the lines
/// of `fleet-follow --json`.
package enum JSONText {
  /// `text` as a JSON string literal, quotes included: `"`, `\`, control characters and DEL
  /// escaped (RFC 8259 section 7), everything else as it is, in UTF-8.
  package static func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}
