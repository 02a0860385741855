internal import FleetSync

/// The glitches one server connection may cause, as a token bucket: frames that make the
/// server reset a stream or that do nothing but cost it work.
///
/// nghttp2 1.67 added such a limiter against MadeYouReset (CVE-2025-8671): a client sending
/// frames that make the *server* reset streams, which no rapid-reset counter sees. The
/// Debian nghttp2 we link (1.52) has none, so the server role keeps its own, with the same
/// defaults. Each glitch takes a token; the bucket holds ``ServerOptions/GlitchLimit/burst``
/// and refills ``ServerOptions/GlitchLimit/refillPerSecond`` a second. Once it is empty the
/// connection ends with GOAWAY ENHANCE_YOUR_CALM.
///
/// A value owned by its connection, on the loop. nghttp2's callbacks only ``record()``;
/// the connection ``settle(now:)``s once mem_recv (or mem_send) has returned.
struct GlitchLimiter {
  let limit: ServerOptions.GlitchLimit
  private var tokens: Double
  private var refilledAt: UInt64
  /// Glitches recorded and not yet taken from the bucket.
  private(set) var pending = 0
  /// Every glitch so far (for logs).
  private(set) var total = 0

  /// A full bucket at `now` (monotonic nanoseconds).
  init(_ limit: ServerOptions.GlitchLimit, now: UInt64) {
    self.limit = limit
    tokens = Double(limit.burst)
    refilledAt = now
  }

  /// One more glitch.
  mutating func record() {
    pending += 1
    total += 1
  }

  /// Takes the pending glitches from the bucket, refilled up to `now`; false once it ran
  /// dry (the connection is to end).
  mutating func settle(now: UInt64) -> Bool {
    let count = pending
    pending = 0
    return take(count, now: now)
  }

  /// Takes `count` glitches from the bucket, refilled up to `now`; false (and the bucket
  /// empty) when it held fewer.
  mutating func take(_ count: Int, now: UInt64) -> Bool {
    guard count > 0 else { return true }
    refill(now: now)
    let taken = Double(count)
    guard tokens >= taken else {
      tokens = 0
      return false
    }
    tokens -= taken
    return true
  }

  /// Whether the bucket holds `count` glitches at `now`.
  mutating func has(_ count: Int, now: UInt64) -> Bool {
    refill(now: now)
    return tokens >= Double(count)
  }

  /// Whether the bucket is full again at `now`: it then remembers nothing.
  mutating func isFull(now: UInt64) -> Bool {
    refill(now: now)
    return tokens >= Double(limit.burst)
  }

  private mutating func refill(now: UInt64) {
    guard now > refilledAt else { return }
    let elapsed = Double(now - refilledAt) / 1e9
    tokens = min(Double(limit.burst), tokens + elapsed * Double(limit.refillPerSecond))
    refilledAt = now
  }
}

/// The glitch buckets of client addresses: a client that reconnects as soon as its
/// connection ends for glitches finds the address's bucket as empty as the connection's
/// was, so each new connection ends at its first glitches rather than being allowed a whole
/// burst again. Honest clients sharing the address (a NAT) lose nothing: only a connection
/// that causes glitches is ended. Shared by the server's loops.
final class PeerGlitchBuckets: Sendable {
  let limit: ServerOptions.GlitchLimit
  private let buckets = PosixMutex<[String: GlitchLimiter]>([:])
  /// Addresses one of whose connections was ended for glitches, whose new connections are
  /// turned away at accept until `until`.
  private let refusals = PosixMutex<[String: Refusal]>([:])
  /// Past this many addresses, the full buckets (addresses quiet long enough) are forgotten.
  private static let pruneAbove = 4_096
  /// The first refusal lasts this long; each next one, while the address goes on, twice the
  /// last, up to ``longestRefusal``.
  static let firstRefusal: UInt64 = 1_000_000_000
  static let longestRefusal: UInt64 = 30_000_000_000

  private struct Refusal {
    var until: UInt64
    var length: UInt64
  }

  init(_ limit: ServerOptions.GlitchLimit) {
    self.limit = limit
  }

  /// Whether `address`'s bucket is empty at `now` (less than one glitch left).
  func isEmpty(_ address: String, now: UInt64) -> Bool {
    buckets.withLock { buckets in
      guard var bucket = buckets[address] else { return false }
      defer { buckets[address] = bucket }
      return !bucket.has(1, now: now)
    }
  }

  /// Whether a new connection from `address` is turned away at `now`, before any HTTP/2 is
  /// set up for it: one of the address's connections was ended for glitches less than its
  /// refusal ago.
  func refuses(_ address: String, now: UInt64) -> Bool {
    refusals.withLock { refusals in
      guard let refusal = refusals[address] else { return false }
      return now < refusal.until
    }
  }

  /// A connection from `address` was ended for glitches at `now`: its address's new
  /// connections are refused for 1 s, or, when it was refused before and glitched again
  /// within twice that refusal, for twice as long as then (up to 30 s). A client that
  /// reconnects as soon as it is cut off would otherwise cost the server an HTTP/2 session
  /// per reconnection, each ended at its first glitches: thousands a second.
  func connectionEnded(_ address: String, now: UInt64) {
    refusals.withLock { refusals in
      var refusal = refusals[address] ?? Refusal(until: 0, length: 0)
      let goesOn = refusal.length > 0 && now < refusal.until &+ 2 * refusal.length
      refusal.length = goesOn ? min(2 * refusal.length, Self.longestRefusal) : Self.firstRefusal
      refusal.until = now + refusal.length
      refusals[address] = refusal
      if refusals.count > Self.pruneAbove {
        for (key, other) in refusals where now >= other.until &+ 2 * other.length {
          refusals[key] = nil
        }
      }
    }
  }

  /// Takes `count` glitches from `address`'s bucket at `now`; false when it ran dry.
  func take(_ count: Int, from address: String, now: UInt64) -> Bool {
    buckets.withLock { buckets in
      var bucket = buckets[address] ?? GlitchLimiter(limit, now: now)
      let holds = bucket.take(count, now: now)
      buckets[address] = bucket
      if buckets.count > Self.pruneAbove {
        for (key, var other) in buckets where other.isFull(now: now) { buckets[key] = nil }
      }
      return holds
    }
  }
}
