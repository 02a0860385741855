import GRPCWire
import PeerSupport
import Testing

/// The grpc-timeout header: finest unit in at most 8 digits, rounded up, capped; strict parsing.
@Suite("grpc-timeout")
struct GRPCTimeoutTests {
  // duration, header value
  static let encodings: [(Duration, String)] = [
    (.nanoseconds(1), "1n"),
    (.nanoseconds(999), "999n"),
    (.nanoseconds(99_999_999), "99999999n"),
    (.nanoseconds(100_000_000), "100000u"),
    (.nanoseconds(100_000_001), "100001u"),
    (.milliseconds(100), "100000u"),
    (.seconds(1), "1000000u"),
    (.seconds(99), "99000000u"),
    (.seconds(100), "100000m"),
    (.seconds(3 * 3_600), "10800000m"),
    (.milliseconds(99_999_999), "99999999m"),
    (.seconds(100_000), "100000S"),
    (.seconds(99_999_999), "99999999S"),
    (.seconds(100_000_000), "1666667M"),
    (.seconds(99_999_999 * 60), "99999999M"),
    (.seconds(99_999_999 * 60 + 1), "1666667H"),
    (.seconds(99_999_999 * 3_600), "99999999H"),
    (.seconds(99_999_999 * 3_600 + 1), "99999999H"),
    (.seconds(Int64.max), "99999999H"),
    (.seconds(Int64.max) + .nanoseconds(999_999_999), "99999999H"),
    (Duration(secondsComponent: 0, attosecondsComponent: 1), "1n"),
    (Duration(secondsComponent: 200_000, attosecondsComponent: 1), "200001S"),
    (.zero, "0n"),
    (.seconds(-5), "0n"),
    (.nanoseconds(-1), "0n"),
  ]

  @Test("durations encode in the finest unit that fits in 8 digits", arguments: encodings)
  func encode(_ duration: Duration, _ value: String) {
    #expect(GRPCTimeout.encode(duration) == value)
  }

  @Test("an encoded positive timeout is never shorter than asked, nor 0")
  func neverShorter() {
    var random = FuzzRandom(seed: 0x71_3E0)
    for _ in 0..<5_000 {
      // Magnitudes from nanoseconds to centuries.
      let scale = Int64(1) << Int64(random.next(upTo: 62))
      let nanos = 1 + Int64(random.next(upTo: Int(truncatingIfNeeded: scale)))
      let duration = Duration.nanoseconds(nanos)
      let value = GRPCTimeout.encode(duration)
      #expect(value.utf8.count <= 9)
      let parsed = GRPCTimeout.parse(value)
      #expect(parsed != nil && parsed! >= duration, "\(duration) → \(value)")
      #expect(parsed != .zero)
    }
  }

  // header value, duration
  static let parsings: [(String, Duration)] = [
    ("1n", .nanoseconds(1)),
    ("1000000u", .seconds(1)),
    ("100m", .milliseconds(100)),
    ("5S", .seconds(5)),
    ("2M", .seconds(120)),
    ("3H", .seconds(10_800)),
    ("00000001S", .seconds(1)),
    ("0n", .zero),
    ("99999999H", .seconds(99_999_999 * 3_600)),
  ]

  @Test("valid values parse", arguments: parsings)
  func parse(_ value: String, _ duration: Duration) {
    #expect(GRPCTimeout.parse(value) == duration)
    #expect(GRPCTimeout.parse(value[...]) == duration)
  }

  @Test(
    "malformed values are rejected",
    arguments: [
      "", "1", "S", "123456789S", "1x", "-1S", "+1S", " 1S", "1S ", "1SS", "1.5S", "1s", "1h",
      "１S", "1 S", "0x1S",
    ])
  func parseRejects(_ value: String) {
    #expect(GRPCTimeout.parse(value) == nil)
  }
}
