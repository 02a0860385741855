import GRPCWire
import PeerSupport
import Testing

/// grpc-message percent-encoding (PROTOCOL-HTTP2.md, "Status-Message"): exact encodings, exact
/// tolerant decodings of broken input, and round trips of arbitrary Unicode.
@Suite("grpc-message percent-encoding")
struct GRPCMessageEncodingTests {
  // message, its encoding
  static let encodings: [(String, String)] = [
    ("", ""),
    ("trip not found", "trip not found"),
    (
      "printable ASCII !\"#$&'()*+,-./:;<=>?@[\\]^_`{|}~",
      "printable ASCII !\"#$&'()*+,-./:;<=>?@[\\]^_`{|}~"
    ),
    ("100%", "100%25"),
    ("%41", "%2541"),
    ("line\nbreak", "line%0Abreak"),
    ("tab\there", "tab%09here"),
    ("\r\n", "%0D%0A"),
    ("nul\u{0}", "nul%00"),
    ("del\u{7F}", "del%7F"),
    ("é", "%C3%A9"),
    ("Fahrt abgesagt für Ärger", "Fahrt abgesagt f%C3%BCr %C3%84rger"),
    ("日本", "%E6%97%A5%E6%9C%AC"),
    ("🚕", "%F0%9F%9A%95"),
  ]

  @Test("messages encode to exactly the spec's form", arguments: encodings)
  func encode(_ message: String, _ encoded: String) {
    #expect(GRPCMessageEncoding.percentEncode(message) == encoded)
    // Every encoded byte is printable ASCII, so it is a valid header value.
    #expect(encoded.utf8.allSatisfy { (0x20...0x7E).contains($0) })
  }

  @Test("encodings decode back to the message", arguments: encodings)
  func decode(_ message: String, _ encoded: String) {
    #expect(GRPCMessageEncoding.percentDecode(encoded) == message)
    #expect(GRPCMessageEncoding.percentDecode(encoded[...]) == message)
  }

  // received value, message; broken escapes stay literal, bad UTF-8 becomes U+FFFD
  static let tolerantDecodings: [(String, String)] = [
    ("%G1", "%G1"),
    ("%", "%"),
    ("%4", "%4"),
    ("abc%", "abc%"),
    ("%%41", "%A"),
    ("%4%41", "%4A"),
    ("%e6%97%a5", "日"),
    ("%41%4a%4A", "AJJ"),
    ("%FF", "\u{FFFD}"),
    ("%C3", "\u{FFFD}"),
    ("a%C3b", "a\u{FFFD}b"),
    ("%ED%A0%80", "\u{FFFD}\u{FFFD}\u{FFFD}"),
    ("not encoded é", "not encoded é"),
    ("%20%", " %"),
  ]

  @Test("broken escapes and invalid UTF-8 decode without failing", arguments: tolerantDecodings)
  func tolerantDecode(_ value: String, _ message: String) {
    #expect(GRPCMessageEncoding.percentDecode(value) == message)
  }

  @Test("thousands of random Unicode messages round-trip")
  func randomRoundTrips() {
    var random = FuzzRandom(seed: 0x6D65_7373)
    let pool: [ClosedRange<UInt32>] = [
      0x0...0x7F, 0x80...0x7FF, 0x800...0xD7FF, 0x1_0000...0x1_FFFF,
    ]
    for _ in 0..<2_000 {
      var message = String.UnicodeScalarView()
      for _ in 0..<random.next(upTo: 40) {
        let range = pool[random.next(upTo: pool.count)]
        let value =
          range.lowerBound + UInt32(random.next(upTo: Int(range.upperBound - range.lowerBound) + 1))
        if let scalar = Unicode.Scalar(value) { message.append(scalar) }
      }
      let text = String(message)
      let encoded = GRPCMessageEncoding.percentEncode(text)
      #expect(encoded.utf8.allSatisfy { (0x20...0x7E).contains($0) })
      #expect(GRPCMessageEncoding.percentDecode(encoded) == text)
    }
  }

  @Test("random printable-ASCII values never fail to decode")
  func randomValuesDecode() {
    var random = FuzzRandom(seed: 7)
    let alphabet = Array("%0123456789abcdefABCDEFGxyz ~".utf8)
    for _ in 0..<2_000 {
      let bytes = (0..<random.next(upTo: 24)).map { _ in alphabet[random.next(upTo: alphabet.count)]
      }
      let decoded = GRPCMessageEncoding.percentDecode(String(decoding: bytes, as: UTF8.self))
      // Decoding never grows the text in bytes, except where bad UTF-8 became U+FFFD (3 bytes).
      #expect(decoded.unicodeScalars.count <= bytes.count)
    }
  }
}
