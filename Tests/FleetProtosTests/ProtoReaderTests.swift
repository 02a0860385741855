import FleetProtosFixtures
import PeerSupport
@_spi(GeneratedCode) import ProtoRuntime
import Testing

/// ProtoReader frames wire bytes as protobuf-c's unpack does. `google.protobuf.Empty` has no
/// fields, so decoding one through protobuf-c (its bridge: unpack, then the unknown fields
/// copied and checked) frames every field as unknown: the reader reading everything as
/// unknown must accept and reject the same bytes and keep the same fields.
@Suite("ProtoReader frames bytes as protobuf-c does", .timeLimit(.minutes(2)))
struct ProtoReaderTests {
  /// The reader's verdict: the unknown fields it read, or nil when it threw.
  func read(_ bytes: [UInt8]) -> [ProtoUnknownFields.Field]? {
    bytes.withUnsafeBytes { raw in
      var reader = ProtoReader(raw)
      var unknown = ProtoUnknownFields()
      do throws(ProtoDecodingError) {
        try reader.readUnknown(into: &unknown)
        return unknown.fields
      } catch {
        #expect(error.reason == .malformed)
        return nil
      }
    }
  }

  /// protobuf-c's verdict through the bridge, as `read` gives it.
  func unpacked(_ bytes: [UInt8]) -> [ProtoUnknownFields.Field]? {
    try? GoogleProtobuf.Empty(serializedBytes: bytes).unknownFields.fields
  }

  /// Checks that both verdicts agree on every input; how many each side accepted.
  func agree(_ inputs: [[UInt8]]) -> (accepted: Int, rejected: Int) {
    var accepted = 0
    for bytes in inputs {
      let ours = read(bytes)
      #expect(ours == unpacked(bytes), "\(bytes)")
      if ours != nil { accepted += 1 }
    }
    return (accepted, inputs.count - accepted)
  }

  @Test("5,000 seeded random byte strings: accepted and rejected alike, the same fields kept")
  func randomBytes() {
    var random = FuzzRandom(seed: 0x5EED_F1EE7)
    let inputs = (0..<5_000).map { _ in
      (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }
    let (accepted, rejected) = agree(inputs)
    // Both outcomes must occur for the comparison to mean anything.
    #expect(accepted > 0)
    #expect(rejected > 4_000)
  }

  @Test("3,000 corruptions and every truncation of the sample Trip: the same verdicts")
  func corruptionsAndTruncations() {
    let valid = SampleTrips.fullyPopulated.serializedBytes()
    var random = FuzzRandom(seed: 42)
    let corrupted = (0..<3_000).map { _ in random.corrupted(valid) }
    let truncated = (0...valid.count).map { Array(valid[..<$0]) }
    let (accepted, rejected) = agree(corrupted + truncated)
    #expect(accepted > 0)
    #expect(rejected > 0)
    // The whole Trip, read as unknown fields: one per top-level field it sets.
    #expect((read(valid)?.count ?? 0) > 30)
  }

  @Test(
    "each framing rule: the reader and protobuf-c refuse the same bytes",
    arguments: [
      ("varint of 11 bytes", [0x08] + Array(repeating: 0xFF, count: 10) + [0x01]),
      ("varint cut short", [0x08, 0xFF, 0xFF]),
      ("tag of 6 bytes", [0xF8, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00]),
      ("tag cut short", [0xFF]),
      ("field number 0", [0x00, 0x01]),
      ("field 0 in a two-byte tag", [0x80, 0x00, 0x01]),
      ("a five-byte tag past 2^29 - 1", [0xF8, 0xFF, 0xFF, 0xFF, 0x7F, 0x01]),
      ("length past the end", [0x0A, 0x0A, 0x61, 0x62, 0x63]),
      ("length of 2^31", [0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0x61]),
      ("length prefix of 6 bytes", [0x0A, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]),
      // Not wrapped to 0 by protobuf-c 1.4.1 (Debian's build): refused as past the end.
      ("a length prefix of 2^32", [0x0A, 0x80, 0x80, 0x80, 0x80, 0x10]),
      ("fixed64 cut short", [0x09, 1, 2, 3, 4, 5, 6, 7]),
      ("fixed32 cut short", [0x0D, 1, 2, 3]),
      ("start group (wire type 3)", [0x0B, 0x0C]),
      ("end group (wire type 4)", [0x0C]),
      ("wire type 6", [0x0E, 0x00]),
      ("wire type 7", [0x0F, 0x00]),
    ] as [(String, [UInt8])])
  func refused(_ what: String, _ bytes: [UInt8]) {
    #expect(read(bytes) == nil, "\(what)")
    #expect(unpacked(bytes) == nil, "\(what)")
  }

  @Test(
    "edge cases protobuf-c accepts, read to the same fields",
    arguments: [
      ("varint of 10 bytes", [0x08] + Array(repeating: 0xFF, count: 9) + [0x01]),
      ("the largest field number", [0xF8, 0xFF, 0xFF, 0xFF, 0x0F, 0x01]),
      ("an empty length-delimited field", [0x0A, 0x00]),
      (
        "every wire type in turn",
        [0x08, 0x01, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x1A, 0x01, 0x61, 0x25, 1, 2, 3, 4]
      ),
      ("nothing", []),
    ] as [(String, [UInt8])])
  func accepted(_ what: String, _ bytes: [UInt8]) {
    let ours = read(bytes)
    #expect(ours != nil, "\(what)")
    #expect(ours == unpacked(bytes), "\(what)")
  }

  @Test("values read as protobuf-c's parse_uint64 reads them")
  func values() throws {
    // 2^64 - 1 in 10 bytes; the 10th byte's bits past 64 dropped (0x7F keeps only its 1).
    let max: [UInt8] = Array(repeating: 0xFF, count: 9) + [0x7F]
    // 1 written with redundant continuation bytes.
    let padded: [UInt8] = [0x81, 0x80, 0x80, 0x00]
    let fixed: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0A, 0x0B, 0x0C, 0x0D]
    var values: [UInt64] = []
    (max + padded + fixed).withUnsafeBytes { raw in
      var reader = ProtoReader(raw)
      do throws(ProtoDecodingError) {
        values.append(try reader.varint())
        values.append(try reader.varint())
        values.append(try reader.fixed64())
        values.append(UInt64(try reader.fixed32()))
        #expect(reader.isAtEnd)
      } catch {
        Issue.record("threw \(error)")
      }
    }
    #expect(values == [UInt64.max, 1, 0x0807_0605_0403_0201, 0x0D0C_0B0A])
  }
}
