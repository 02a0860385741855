import FleetSync

extension FuzzTarget {
  /// Base64 of `-bin` metadata: the input both as bytes to encode and as text to decode.
  static let base64 = FuzzTarget(
    name: "base64",
    summary: "Base64: decode(encode(b)) == b; valid text re-encodes to itself (padding and "
      + "unused bits aside)",
    seeds: base64Seeds,
    run: fuzzBase64)
}

private func fuzzBase64(_ input: UnsafeRawBufferPointer) {
  let bytes = Array(input)
  let encoded = Base64.encodeUnpadded(bytes)
  invariant(Base64.decode(encoded) == bytes, "\(bytes.count) bytes do not survive a round trip")
  invariant(!encoded.utf8.contains(UInt8(ascii: "=")), "encodeUnpadded padded")

  let text = String(decoding: bytes, as: UTF8.self)
  guard let decoded = Base64.decode(text) else { return }
  // What decoded must be the alphabet with at most the padding that completes a group of 4.
  let unpadded = text.utf8.prefix { $0 != UInt8(ascii: "=") }
  let padding = text.utf8.count - unpadded.count
  invariant(
    padding <= 2 && text.utf8.suffix(padding).allSatisfy { $0 == UInt8(ascii: "=") },
    "accepted \(padding) characters of padding or = inside")
  invariant(padding == 0 || text.utf8.count % 4 == 0, "accepted padding that is not a group's")
  // Re-encoding gives the same characters; only the unused low bits of the last may differ.
  let again = Base64.encodeUnpadded(decoded)
  invariant(
    again.utf8.count == unpadded.count && again.utf8.dropLast().elementsEqual(unpadded.dropLast()),
    "\(text) decodes to bytes that encode as \(again)")
  invariant(Base64.decode(again) == decoded, "the canonical form decodes differently")
  // Accepting unpadded text means accepting it padded, too.
  if padding == 0, unpadded.count % 4 != 0 {
    let padded = text + String(repeating: "=", count: 4 - unpadded.count % 4)
    invariant(Base64.decode(padded) == decoded, "\(text) padded decodes differently")
  }
}

private func base64Seeds() -> [(name: String, bytes: [UInt8])] {
  let details = SeedMessages.statusDetails(.resourceExhausted, SeedMessages.details)
  let text = Base64.encodeUnpadded(details)
  return [
    ("status-details-bin", Array(text.utf8)),
    ("padded-one", Array("QQ==".utf8)),
    ("padded-two", Array("QUI=".utf8)),
    ("unpadded", Array("QUJDQQ".utf8)),
    ("bad-padding", Array("QQ=".utf8)),
    ("url-safe-alphabet", Array("-_-_".utf8)),
    ("whitespace", Array("QU JD".utf8)),
    ("dangling-character", Array("QUJDR".utf8)),
    ("unused-bits-set", Array("QR".utf8)),
    ("binary", Array(details.prefix(48))),
  ]
}
