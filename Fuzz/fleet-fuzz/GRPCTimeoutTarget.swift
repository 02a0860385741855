import GRPCWire

extension FuzzTarget {
  /// The `grpc-timeout` header: parsed from a peer's text, and encoded from any duration.
  ///
  /// Input: a mode byte; even: the rest is a header value to parse; odd: the next 16 bytes
  /// are a duration's seconds and attoseconds (little-endian) to encode.
  static let grpcTimeout = FuzzTarget(
    name: "grpc-timeout",
    summary: "grpc-timeout: accepts exactly 1-8 digits + unit; parse(encode(d)) >= d, less "
      + "than a unit more",
    seeds: grpcTimeoutSeeds,
    run: fuzzGRPCTimeout)
}

/// Each unit's size, from PROTOCOL-HTTP2.md's "Timeout" grammar.
private let unitSizes: [UInt8: Duration] = [
  UInt8(ascii: "H"): .seconds(3_600), UInt8(ascii: "M"): .seconds(60),
  UInt8(ascii: "S"): .seconds(1),
  UInt8(ascii: "m"): .milliseconds(1), UInt8(ascii: "u"): .microseconds(1),
  UInt8(ascii: "n"): .nanoseconds(1),
]
private let longest = Duration.seconds(99_999_999 * 3_600)

private func fuzzGRPCTimeout(_ input: UnsafeRawBufferPointer) {
  guard let mode = input.first else { return }
  let rest = Array(input[1...])
  if mode & 1 == 0 {
    let text = String(decoding: rest, as: UTF8.self)
    let parsed = GRPCTimeout.parse(text)
    invariant(
      (parsed != nil) == followsGrammar(rest), "parse(\(rest)) gave \(String(describing: parsed))")
    guard let parsed else { return }
    invariant(parsed >= .zero && parsed <= longest, "\(text) parsed as \(parsed)")
    checkEncoding(of: parsed)
  } else if rest.count >= 16 {
    let seconds = rest[0..<8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    let attoseconds = rest[8..<16].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    checkEncoding(
      of: Duration(
        secondsComponent: Int64(bitPattern: seconds),
        attosecondsComponent: Int64(attoseconds % 1_000_000_000_000_000_000)))
  }
}

/// `TimeoutValue TimeoutUnit`: 1 to 8 ASCII digits, then one of `H M S m u n`.
private func followsGrammar(_ value: [UInt8]) -> Bool {
  guard let unit = value.last, unitSizes[unit] != nil else { return false }
  let digits = value.dropLast()
  return (1...8).contains(digits.count) && digits.allSatisfy { (0x30...0x39).contains($0) }
}

private func checkEncoding(of duration: Duration) {
  let encoded = GRPCTimeout.encode(duration)
  let bytes = Array(encoded.utf8)
  invariant(followsGrammar(bytes), "encode(\(duration)) gave \(encoded)")
  let parsed = GRPCTimeout.parse(encoded)!
  if duration <= .zero {
    invariant(encoded == "0n", "encode(\(duration)) gave \(encoded), not 0n")
  } else if duration > longest {
    invariant(encoded == "99999999H", "encode(\(duration)) gave \(encoded), not the maximum")
  } else {
    // Rounded up, never down, and by less than the unit it is written in.
    invariant(parsed >= duration, "encode(\(duration)) gave \(encoded): shorter")
    invariant(parsed - duration < unitSizes[bytes.last!]!, "encode(\(duration)) gave \(encoded)")
  }
}

private func grpcTimeoutSeeds() -> [(name: String, bytes: [UInt8])] {
  func text(_ value: String) -> [UInt8] { [0] + Array(value.utf8) }
  func duration(_ seconds: Int64, _ attoseconds: Int64) -> [UInt8] {
    [1] + (0..<8).map { UInt8(truncatingIfNeeded: seconds >> ($0 * 8)) }
      + (0..<8).map { UInt8(truncatingIfNeeded: attoseconds >> ($0 * 8)) }
  }
  return [
    ("encoded-20s", text(GRPCTimeout.encode(.seconds(20)))),
    ("encoded-1500ms", text(GRPCTimeout.encode(.milliseconds(1_500)))),
    ("hours-max", text("99999999H")),
    ("minutes", text("30M")),
    ("micros", text("250u")),
    ("zero", text("0n")),
    ("nine-digits", text("123456789S")),
    ("signed", text("-1S")),
    ("fraction", text("1.5S")),
    ("no-digits", text("S")),
    ("unit-then-digit", text("5S1")),
    ("duration-1-attosecond", duration(0, 1)),
    ("duration-99999999ms-plus", duration(99_999, 999_000_000_000_000_001)),
    ("duration-100000s", duration(100_000, 0)),
    ("duration-longest", duration(99_999_999 * 3_600, 0)),
    ("duration-int64-max", duration(.max, 999_999_999_999_999_999)),
    ("duration-negative", duration(-5, 500_000_000_000_000_000)),
  ]
}
