import FleetSync

/// One worker's samples not yet handed to its shard.
struct WorkerLog {
  let shard: PosixMutex<LatencyRecorder.Tally>
  private var latencies: [UInt64] = []
  /// OK outcomes, counted apart: most calls are OK, and a counter costs no string hashing.
  private var ok = 0
  private var codes: [String: Int] = [:]
  private var errors: [String: Int] = [:]
  private var responses = 0
  private var responseBytes = 0

  init(shard: PosixMutex<LatencyRecorder.Tally>) {
    self.shard = shard
    latencies.reserveCapacity(256)
  }

  /// One unit's latency.
  mutating func record(_ latency: Duration) {
    let nanoseconds = max(latency.wholeNanoseconds, 0)
    latencies.append(min(UInt64(nanoseconds), LatencyRecorder.highestTrackable))
    if latencies.count >= 256 { flush() }
  }

  /// One call's outcome: `error` nil for OK.
  mutating func outcome(_ error: RPCErrorSummary?) {
    guard let error else {
      ok += 1
      return
    }
    codes[error.code, default: 0] += 1
    errors[error.message, default: 0] += 1
  }

  /// One response message of `byteCount` bytes (without the gRPC prefix) received.
  mutating func response(byteCount: Int) {
    responses += 1
    responseBytes += 5 + byteCount
  }

  /// Hands everything to the shard.
  mutating func flush() {
    // Read in place, not through local copies: a copy still alive at `removeAll` would make
    // it allocate a fresh buffer every batch.
    if ok > 0 { codes["OK", default: 0] += ok }
    shard.withLock { tally in
      for latency in latencies { tally.record(latency) }
      tally.codes.merge(codes, uniquingKeysWith: +)
      tally.errors.merge(errors, uniquingKeysWith: +)
      tally.responses += responses
      tally.responseBytes += responseBytes
    }
    latencies.removeAll(keepingCapacity: true)
    ok = 0
    responses = 0
    responseBytes = 0
    codes.removeAll()
    errors.removeAll()
  }
}

/// A failed call as the report counts it: its status code name and message.
struct RPCErrorSummary {
  var code: String
  var message: String
}
