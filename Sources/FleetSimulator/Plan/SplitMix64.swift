/// A small, fast, seedable random number generator (Steele, Lea and Flood's SplitMix64).
///
/// The simulator derives every trip's plan and traffic from a seed, so the same trip name
/// and options always give the same route, and a test can predict what it will see.
struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64

  init(seed: UInt64) {
    state = seed
  }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    return Self.mix(state)
  }

  /// The SplitMix64 finaliser: a good 64-bit hash of `value`.
  static func mix(_ value: UInt64) -> UInt64 {
    var z = value
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A uniform number in [0, 1).
  mutating func unit() -> Double {
    Double(next() >> 11) * 0x1.0p-53
  }

  /// A uniform number in `range`.
  mutating func uniform(_ range: ClosedRange<Double>) -> Double {
    range.lowerBound + (range.upperBound - range.lowerBound) * unit()
  }

  /// The FNV-1a hash of `text`: stable across runs, unlike `Hasher`.
  static func hash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in text.utf8 {
      hash ^= UInt64(byte)
      hash &*= 0x0000_0100_0000_01B3
    }
    return hash
  }
}
