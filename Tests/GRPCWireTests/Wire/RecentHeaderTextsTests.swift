import Testing

@testable import GRPCWire

/// A session's cache of the uncommon header texts it received lately: the same bytes give the
/// same string (no new allocation), the cache stays bounded, and a text never stands for
/// bytes other than its own.
@Suite("Recent header texts")
struct RecentHeaderTextsTests {
  private func text(_ value: String, _ recent: inout RecentHeaderTexts) -> String {
    Array(value.utf8).withUnsafeBufferPointer { recent.text($0.baseAddress!, $0.count) }
  }

  private func text(_ bytes: [UInt8], _ recent: inout RecentHeaderTexts) -> String {
    bytes.withUnsafeBufferPointer { recent.text($0.baseAddress!, $0.count) }
  }

  /// Whether two strings share their storage (one allocation, not two equal ones).
  private func sameStorage(_ a: String, _ b: String) -> Bool {
    var a = a
    var b = b
    return a.withUTF8 { x in b.withUTF8 { y in x.baseAddress == y.baseAddress } }
  }

  @Test("a repeated value comes back as the string made the first time")
  func repeated() {
    var recent = RecentHeaderTexts()
    let token = "Bearer a-token-long-enough-to-need-storage"
    let first = text(token, &recent)
    let second = text(token, &recent)
    #expect(first == token && second == token)
    #expect(sameStorage(first, second))
    // Bytes of the same length that differ are not taken for it.
    let other = text("Bearer b-token-long-enough-to-need-storage", &recent)
    #expect(other == "Bearer b-token-long-enough-to-need-storage")
  }

  @Test("eight texts are kept, replaced in turn; long ones are not kept")
  func bounded() {
    var recent = RecentHeaderTexts()
    let values = (0..<9).map { "x-custom-value-number-\($0)-padded-out" }
    let firsts = values.map { text($0, &recent) }
    // The ninth replaced the first; the second to the eighth are still there.
    #expect(!sameStorage(text(values[0], &recent), firsts[0]))
    #expect(sameStorage(text(values[8], &recent), firsts[8]))
    let long = String(repeating: "v", count: 200)
    #expect(!sameStorage(text(long, &recent), text(long, &recent)))
  }

  @Test("bytes that are not UTF-8 decode with replacements and are never matched by others")
  func invalidUTF8() {
    var recent = RecentHeaderTexts()
    let invalid: [UInt8] = [0x61, 0xE2, 0x82, 0x62]
    let decoded = text(invalid, &recent)
    #expect(decoded == String(decoding: invalid, as: UTF8.self))
    #expect(text(Array("a\u{FFFD}b".utf8), &recent) == "a\u{FFFD}b")
    #expect(text(invalid, &recent) == decoded)
  }

  private func field(_ value: [UInt8], _ recent: inout RecentHeaderTexts) -> String {
    value.withUnsafeBufferPointer {
      HeaderField(
        name: $0.baseAddress, nameLength: $0.count, value: $0.baseAddress, valueLength: $0.count,
        recent: &recent
      ).name
    }
  }

  private func common(_ bytes: [UInt8]) -> String? {
    bytes.withUnsafeBufferPointer { HeaderField.common($0.baseAddress!, $0.count) }
  }

  @Test("every common text's bytes give the shared string; bytes one off give their own")
  func commonTexts() {
    var recent = RecentHeaderTexts()
    let common = HeaderField.commonByLength.joined().map(\.text)
    #expect(common.contains("grpc-status-details-bin") && common.contains("0"))
    for text in ["0", "200", ":status", "grpc-status", "te", "POST"] {
      #expect(common.contains(text))
    }
    for text in common {
      let bytes = Array(text.utf8)
      // Matched in the table, short texts too (whose strings hold their bytes themselves, so
      // only the lookup shows they were matched rather than decoded anew).
      #expect(self.common(bytes) == text, "\(text): not matched")
      let got = field(bytes, &recent)
      #expect(got == text)
      // Up to 15 bytes a String holds its bytes itself: there is no storage to share.
      if bytes.count > 15 { #expect(sameStorage(got, text), "\(text): not the shared string") }
      // The same length, a byte different at the start or at the end: not the common text.
      for index in [0, bytes.count - 1] {
        var other = bytes
        other[index] ^= 0x20
        #expect(self.common(other) == nil, "\(text) with byte \(index) flipped: matched")
        #expect(field(other, &recent) == String(decoding: other, as: UTF8.self))
      }
    }
  }
}
