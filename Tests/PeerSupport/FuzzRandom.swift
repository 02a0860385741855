/// A seeded SplitMix64 generator (Steele, Lea and Flood), so randomised tests see the same
/// inputs on every run and a failure can be replayed.
public struct FuzzRandom: RandomNumberGenerator {
  private var state: UInt64

  public init(seed: UInt64) {
    state = seed
  }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number in `0..<bound`.
  public mutating func next(upTo bound: Int) -> Int {
    Int(next() % UInt64(bound))
  }

  /// `count` random bytes.
  public mutating func bytes(_ count: Int) -> [UInt8] {
    (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
  }

  /// `bytes` with one to four of them, chosen at random, set to random values.
  public mutating func corrupted(_ bytes: [UInt8]) -> [UInt8] {
    var out = bytes
    for _ in 0..<(1 + next() % 4) {
      out[Int(next() % UInt64(out.count))] = UInt8(truncatingIfNeeded: next())
    }
    return out
  }
}
