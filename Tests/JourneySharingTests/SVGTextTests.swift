import Testing

@testable import JourneySharing

@Suite("SVG text and numbers")
struct SVGTextTests {
  @Test(
    "numbers: fixed decimals, no trailing zeros, no exponent, no negative zero",
    arguments: [
      (0.0, 2, "0"), (-0.0, 2, "0"), (12.5, 2, "12.5"), (12.345, 2, "12.35"), (-3, 2, "-3"),
      (-0.001, 2, "0"), (0.00001, 7, "0.00001"), (-122.4194155, 7, "-122.4194155"),
      (47.37, 7, "47.37"), (1e300, 2, "1000000000"), (.nan, 2, "0"), (-.infinity, 2, "0"),
      (0.5, 0, "1"), (0.05, 2, "0.05"),
    ])
  func numbers(value: Double, decimals: Int, text: String) {
    #expect(SVGText.number(value, decimals: decimals) == text)
  }

  @Test("XML's special characters are escaped; characters XML forbids are replaced")
  func escaping() {
    #expect(SVGText.escaped(#"a<b>&"c"'d'"#) == "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;")
    #expect(SVGText.escaped("tab\tnew\nline") == "tab\tnew\nline")
    #expect(SVGText.escaped("bell\u{07}nul\u{0}") == "bell\u{FFFD}nul\u{FFFD}")
    #expect(SVGText.escaped("ünïcödé · 4 min") == "ünïcödé · 4 min")
  }
}
