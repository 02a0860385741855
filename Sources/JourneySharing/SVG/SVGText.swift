// Text and numbers as they go into the SVG document. Numbers are written with a fixed number
// of decimals, trailing zeros removed, whatever the locale: the same rendering gives the same
// bytes, and a cache or a test can compare documents.

package enum SVGText {
  /// `text` with the five characters XML gives a meaning escaped, safe in element content
  /// and in attribute values quoted with `"` or `'`. Characters XML 1.0 does not allow at
  /// all (control characters other than tab, newline and return) become U+FFFD.
  package static func escaped(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      case "'": result += "&apos;"
      case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
      case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
        result += "\u{FFFD}"
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// `value` rounded to `decimals` (0 to 9) decimals, without trailing zeros or a negative
  /// zero ("12.5", "-3", "0"). Values that are not finite are written as 0, and magnitudes
  /// are capped at 10⁹ so that a wild coordinate cannot produce a huge or invalid number.
  static func number(_ value: Double, decimals: Int = 2) -> String {
    let decimals = min(max(decimals, 0), 9)
    guard value.isFinite else { return "0" }
    var factor: Int64 = 1
    for _ in 0..<decimals { factor *= 10 }
    let capped = min(max(value, -1e9), 1e9)
    let scaled = Int64((capped * Double(factor)).rounded())
    if scaled == 0 { return "0" }
    let magnitude = scaled.magnitude
    let whole = magnitude / UInt64(factor)
    var fraction = magnitude % UInt64(factor)
    var text = scaled < 0 ? "-\(whole)" : "\(whole)"
    guard fraction != 0 else { return text }
    var digits = decimals
    while fraction % 10 == 0 {
      fraction /= 10
      digits -= 1
    }
    let fractionText = String(fraction)
    text += "." + String(repeating: "0", count: digits - fractionText.count) + fractionText
    return text
  }
}
