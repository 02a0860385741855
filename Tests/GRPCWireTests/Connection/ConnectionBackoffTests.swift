import Testing

@testable import GRPCWire

/// gRPC's connection-backoff algorithm, step by step with a fixed clock and fixed jitter.
@Suite("Connection backoff")
struct ConnectionBackoffTests {
  let start = MonotonicInstant(nanoseconds: 1_000_000_000_000)

  func seconds(_ instant: MonotonicInstant) -> Double {
    Double(instant.nanoseconds - start.nanoseconds) / 1e9
  }

  @Test("without jitter, retries wait 1, 1.6, 2.56, … seconds, capped at the maximum")
  func growth() {
    var backoff = ConnectionBackoff(ChannelOptions.Backoff(), now: start, random: { 0.5 })
    // Attempts fail instantly: each retry is due at the previous deadline.
    var now = start
    var waits: [Double] = []
    for _ in 0..<14 {
      let retryAt = backoff.attemptFailed(now: now)
      waits.append(seconds(retryAt) - seconds(now))
      now = retryAt
    }
    let expected = [1.0, 1.6, 2.56, 4.096, 6.5536, 10.48576, 16.777216, 26.8435456,
      42.94967296, 68.719476736, 109.9511627776, 120, 120, 120]
    for (wait, want) in zip(waits, expected) {
      #expect(abs(wait - want) < 1e-6, "waited \(wait) s, expected \(want) s")
    }
  }

  @Test("jitter moves each wait by at most ±20 %")
  func jitterBounds() {
    for (random, factor) in [(0.0, 0.8), (0.999_999, 1.2)] {
      var backoff = ConnectionBackoff(ChannelOptions.Backoff(), now: start, random: { random })
      let first = backoff.attemptFailed(now: start)  // the initial backoff has no jitter
      #expect(abs(seconds(first) - 1.0) < 1e-9)
      let second = backoff.attemptFailed(now: first)
      #expect(abs(seconds(second) - seconds(first) - 1.6 * factor) < 1e-4)
    }
  }

  @Test("an attempt may take the minimum connect timeout even when the backoff is shorter")
  func connectTimeout() {
    let backoff = ConnectionBackoff(ChannelOptions.Backoff(), now: start, random: { 0.5 })
    #expect(backoff.connectTimeout(now: start) == .seconds(20))
    var short = ChannelOptions.Backoff()
    short.minimumConnectTimeout = .milliseconds(100)
    let quick = ConnectionBackoff(short, now: start, random: { 0.5 })
    #expect(quick.connectTimeout(now: start) == .seconds(1))
  }

  @Test("a success resets the backoff to its initial value")
  func reset() {
    var backoff = ConnectionBackoff(ChannelOptions.Backoff(), now: start, random: { 0.5 })
    var now = start
    for _ in 0..<5 { now = backoff.attemptFailed(now: now) }
    backoff.reset(now: now)
    let retryAt = backoff.attemptFailed(now: now)
    #expect(abs(seconds(retryAt) - seconds(now) - 1.0) < 1e-9)
  }

  @Test("after a success, the next backoff counts from when the next attempt starts")
  func resetCountsFromAttempt() {
    var backoff = ConnectionBackoff(ChannelOptions.Backoff(), now: start, random: { 0.5 })
    backoff.reset(now: start)  // connected at `start`, lost an hour later
    let attempt = start.advanced(by: .seconds(3600))
    _ = backoff.startAttempt(now: attempt)
    let retryAt = backoff.attemptFailed(now: attempt)
    #expect(abs(seconds(retryAt) - seconds(attempt) - 1.0) < 1e-9)
  }

  @Test("a failure after the deadline retries at once")
  func lateFailure() {
    var backoff = ConnectionBackoff(ChannelOptions.Backoff(), now: start, random: { 0.5 })
    let late = start.advanced(by: .seconds(5))
    #expect(backoff.attemptFailed(now: late) == late)
  }
}
