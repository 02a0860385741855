/// The `grpc-timeout` request header: how long the server has for a call.
///
/// Its grammar (PROTOCOL-HTTP2.md, "Timeout") is at most 8 decimal digits followed by one unit:
/// `H` hours, `M` minutes, `S` seconds, `m` milliseconds, `u` microseconds, `n` nanoseconds.
/// The client still enforces its own deadline locally; this header only tells the server when
/// to give up.
package enum GRPCTimeout {
  /// The largest value the 8 digits allow.
  private static let maxValue: Int64 = 99_999_999
  // Finest first; static so encoding a timeout on every call builds no arrays.
  private static let subsecondUnits: [(String, Int64)] = [("n", 1), ("u", 1_000), ("m", 1_000_000)]
  private static let secondUnits: [(String, Int64)] = [("S", 1), ("M", 60), ("H", 3_600)]

  /// The `grpc-timeout` value for `duration`, in the finest unit that fits in 8 digits.
  ///
  /// The value is rounded up to that unit, never down, so the server does not give up before
  /// the client's own deadline has passed, and a positive timeout never becomes 0. Durations
  /// beyond 99,999,999 hours (about 11,400 years) are sent as `99999999H`. A zero or negative
  /// duration gives `0n`; the caller should fail such a call locally with DEADLINE_EXCEEDED
  /// rather than send it.
  package static func encode(_ duration: Duration) -> String {
    if duration <= .zero { return "0n" }
    let (seconds, attoseconds) = duration.components
    // Sub-nanosecond remainders round up: 1 attosecond is still a positive timeout.
    var wholeNanos = attoseconds / 1_000_000_000
    if attoseconds % 1_000_000_000 > 0 { wholeNanos += 1 }

    // 99,999,999 ms is under 100,000 s, so the three sub-second units only matter below that,
    // where the total in nanoseconds comfortably fits in an Int64.
    if seconds < 100_000 {
      let nanos = seconds * 1_000_000_000 + wholeNanos
      for (unit, size) in subsecondUnits {
        let value = divideRoundingUp(nanos, size)
        if value <= maxValue { return "\(value)\(unit)" }
      }
    }
    // From here on whole seconds, rounded up; saturating so Int64.max seconds cannot overflow.
    let (rounded, overflow) = seconds.addingReportingOverflow(wholeNanos > 0 ? 1 : 0)
    let totalSeconds = overflow ? Int64.max : rounded
    for (unit, size) in secondUnits {
      let value = divideRoundingUp(totalSeconds, size)
      if value <= maxValue { return "\(value)\(unit)" }
    }
    return "\(maxValue)H"
  }

  /// The duration a `grpc-timeout` value stands for; nil unless it is 1 to 8 ASCII digits
  /// followed by one of the units `H M S m u n`.
  ///
  /// No sign, spaces or other characters are accepted. `0n` (and any other zero) parses as
  /// `.zero`: a server should treat the call as already past its deadline.
  package static func parse(_ value: some StringProtocol) -> Duration? {
    // One call into the generic view, then a plain loop over bytes.
    let parsed =
      value.utf8.withContiguousStorageIfAvailable(parse(bytes:))
      ?? Array(value.utf8).withUnsafeBufferPointer(parse(bytes:))
    return parsed
  }

  private static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Duration? {
    var number: Int64 = 0
    var digitCount = 0
    var unit: UInt8?
    for byte in bytes {
      // Nothing may follow the unit.
      guard unit == nil else { return nil }
      if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
        guard digitCount < 8 else { return nil }
        number = number * 10 + Int64(byte - UInt8(ascii: "0"))
        digitCount += 1
      } else {
        unit = byte
      }
    }
    guard digitCount >= 1, let unit else { return nil }
    switch unit {
    case UInt8(ascii: "H"): return .seconds(number * 3_600)
    case UInt8(ascii: "M"): return .seconds(number * 60)
    case UInt8(ascii: "S"): return .seconds(number)
    case UInt8(ascii: "m"): return .milliseconds(number)
    case UInt8(ascii: "u"): return .microseconds(number)
    case UInt8(ascii: "n"): return .nanoseconds(number)
    // A switch over a byte cannot list every value; anything else is not a unit.
    default: return nil
    }
  }

  private static func divideRoundingUp(_ value: Int64, _ divisor: Int64) -> Int64 {
    let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
    return remainder > 0 ? quotient + 1 : quotient
  }
}
