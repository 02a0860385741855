import Foundation
import PeerSupport
import Testing

@testable import GRPCWire
import FleetSync

/// Our base64 for -bin metadata: RFC 4648's vectors, padded and unpadded input, rejection of
/// anything else, and agreement with Foundation's independent implementation.
@Suite("Base64")
struct Base64Tests {
  // RFC 4648 §10 test vectors, unpadded as gRPC asks senders to emit them.
  static let vectors: [(String, String)] = [
    ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
    ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
  ]

  @Test("RFC 4648 vectors encode without padding", arguments: vectors)
  func encode(_ plain: String, _ encoded: String) {
    #expect(Base64.encodeUnpadded(Array(plain.utf8)) == encoded)
  }

  @Test("RFC 4648 vectors decode with and without padding", arguments: vectors)
  func decode(_ plain: String, _ encoded: String) {
    let padded = encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)
    #expect(Base64.decode(encoded) == Array(plain.utf8))
    #expect(Base64.decode(padded) == Array(plain.utf8))
    #expect(Base64.decode(padded[...]) == Array(plain.utf8))
  }

  @Test(
    "input that is not base64 is rejected",
    arguments: [
      "Z", "Zg=", "Zg===", "Z===", "=", "==", "Zm9v!", "Zm 9v", "Zm9v\n", " Zm9v", "Zm-v", "Zm_v",
      "Zg==Zg", "Zm=v", "é", "Zm9vY", "====",
    ])
  func rejects(_ text: String) {
    #expect(Base64.decode(text) == nil)
  }

  @Test("all byte values encode and decode as Foundation does")
  func agreesWithFoundation() throws {
    var random = FuzzRandom(seed: 0xBA5E_64)
    var inputs = [Array(0...255) as [UInt8], [0xFF, 0xFE], [0]]
    for _ in 0..<1_000 { inputs.append(random.bytes(random.next(upTo: 50))) }
    for bytes in inputs {
      let foundation = Data(bytes).base64EncodedString()
      let ours = Base64.encodeUnpadded(bytes)
      #expect(ours == foundation.replacingOccurrences(of: "=", with: ""))
      #expect(Base64.decode(foundation) == bytes)
      #expect(Base64.decode(ours) == bytes)
      // And Foundation reads what we send once padding is added back.
      let padded = ours + String(repeating: "=", count: (4 - ours.count % 4) % 4)
      #expect(Data(base64Encoded: padded).map { Array($0) } == bytes)
    }
  }

  @Test("encoding works on any collection of bytes, not just arrays")
  func collections() {
    #expect(Base64.encodeUnpadded(Array("foobar".utf8)[1...]) == "b29iYXI")
    #expect(Base64.encodeUnpadded("foobar".utf8) == "Zm9vYmFy")
  }
}
