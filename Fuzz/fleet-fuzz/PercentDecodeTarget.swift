import GRPCWire

extension FuzzTarget {
  /// The `grpc-message` trailer's percent-decoding, on any text a peer can send.
  static let percentDecode = FuzzTarget(
    name: "percent-decode",
    summary: "grpc-message: decode(encode(s)) == s; no % is no change; never longer",
    seeds: percentDecodeSeeds,
    run: fuzzPercentDecode)
}

private func fuzzPercentDecode(_ input: UnsafeRawBufferPointer) {
  let text = String(decoding: input, as: UTF8.self)
  let decoded = GRPCMessageEncoding.percentDecode(text)
  if !text.utf8.contains(UInt8(ascii: "%")) {
    invariant(decoded == text, "text without % changed")
  }
  // Each %XX becomes one byte, and only bytes from escapes can be invalid UTF-8: each invalid
  // sequence becomes one U+FFFD (3 bytes), never more than the escapes it came from.
  invariant(decoded.utf8.count <= text.utf8.count, "decoding made \(text) longer")
  // A substring arrives by another path through the generic code.
  invariant(
    GRPCMessageEncoding.percentDecode(text.dropFirst(0)) == decoded, "Substring decodes differently"
  )

  let encoded = GRPCMessageEncoding.percentEncode(text)
  invariant(encoded.utf8.allSatisfy { (0x20...0x7E).contains($0) }, "encoded \(text) is not ASCII")
  invariant(GRPCMessageEncoding.percentDecode(encoded) == text, "\(text) does not round-trip")
}

private func percentDecodeSeeds() -> [(name: String, bytes: [UInt8])] {
  [
    ("encoded-utf8", Array(GRPCMessageEncoding.percentEncode("Le trajet n’existe pas 🚕").utf8)),
    ("encoded-controls", Array(GRPCMessageEncoding.percentEncode("line 1\nline 2\t100%").utf8)),
    ("plain", Array("trip providers/fleet-sample/trips/trip-000042 not found".utf8)),
    ("lower-case-hex", Array("caf%c3%a9".utf8)),
    ("broken-escapes", Array("%%4%G1%4".utf8)),
    ("invalid-utf8-escapes", Array("%C3%28%E2%82%FF%ED%A0%80".utf8)),
    ("truncated-escape-at-end", Array("50%".utf8)),
  ]
}
