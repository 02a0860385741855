
@testable import GRPCWire
import GRPCTestingProtos

/// One call of a fault test and how it ended: what the tests count and check.
struct FaultCall: Sendable, CustomStringConvertible {
  var id: String
  var started: ContinuousClock.Instant
  var ended: ContinuousClock.Instant
  /// nil: the call succeeded.
  var error: RPCError?

  var succeeded: Bool { error == nil }
  var duration: Duration { started.duration(to: ended) }

  var description: String {
    let outcome = error.map { "\($0.code) \($0.message)" } ?? "OK"
    return "\(id): \(outcome) after \(duration.milliseconds) ms"
  }

  /// Request metadata with interop_server.py's test hooks: `x-fleet-test-id` (so the
  /// server's EVENT lines name the call), `x-fleet-test-delay-ms`, `x-fleet-test-hang`.
  static func hooks(id: String, delay: Duration? = nil, hang: Bool = false) -> Metadata {
    var metadata = Metadata()
    metadata.add("x-fleet-test-id", id)
    if let delay { metadata.add("x-fleet-test-delay-ms", "\(delay.milliseconds)") }
    if hang { metadata.add("x-fleet-test-hang", "1") }
    return metadata
  }
}

extension GRPCChannel {
  /// A UnaryCall to interop_server.py (a 16-byte response), tagged `id`; its outcome is
  /// returned rather than thrown. An error that is not an ``RPCError`` comes back as UNKNOWN,
  /// so that the category checks catch it.
  func faultCall(
    _ id: String, delay: Duration? = nil, hang: Bool = false, timeout: Duration? = nil,
    waitForReady: Bool = false
  ) async -> FaultCall {
    var request = GRPCTesting.SimpleRequest()
    request.responseSize = 16
    let options = CallOptions(
      timeout: timeout, metadata: FaultCall.hooks(id: id, delay: delay, hang: hang),
      waitForReady: waitForReady)
    let started = ContinuousClock.now
    do {
      let response = try await unary(TestService.unaryCall, request, options: options)
      let size = response.message.payload?.body.count ?? 0
      let error =
        size == 16
        ? nil : RPCError(code: .dataLoss, message: "the response had \(size) bytes, not 16")
      return FaultCall(id: id, started: started, ended: .now, error: error)
    } catch let error as RPCError {
      return FaultCall(id: id, started: started, ended: .now, error: error)
    } catch {
      return FaultCall(
        id: id, started: started, ended: .now,
        error: RPCError(code: .unknown, message: "not an RPCError: \(error)"))
    }
  }

  /// ``faultCall(_:delay:hang:timeout:waitForReady:)`` as a loop-driven call, started and
  /// ended on the channel's loop and timed there: its duration is the call's as the channel
  /// saw it, not also a task's wait for the cooperative pool, which every suite running in
  /// parallel shares — for tests that bound how long a call took.
  func loopFaultCall(
    _ id: String, timeout: Duration? = nil, waitForReady: Bool = false
  ) async -> FaultCall {
    var message = GRPCTesting.SimpleRequest()
    message.responseSize = 16
    let request = message
    let options = CallOptions(
      timeout: timeout, metadata: FaultCall.hooks(id: id), waitForReady: waitForReady)
    return await withCheckedContinuation { (done: CheckedContinuation<FaultCall, Never>) in
      loop.execute {
        let started = ContinuousClock.now
        do throws(RPCError) {
          _ = try self.startUnary(TestService.unaryCall, request, options: options) { result in
            let ended = ContinuousClock.now
            let error: RPCError?
            switch result {
            case .success(let response):
              let size = response.payload?.body.count ?? 0
              error =
                size == 16
                ? nil : RPCError(code: .dataLoss, message: "the response had \(size) bytes, not 16")
            case .failure(let failure):
              error = failure
            }
            done.resume(returning: FaultCall(id: id, started: started, ended: ended, error: error))
          }
        } catch {
          done.resume(returning: FaultCall(id: id, started: started, ended: .now, error: error))
        }
      }
    }
  }

  /// How many connections the channel has opened so far (failed attempts included), read on
  /// its loop. Only while the channel is open.
  func connectionsOpened() async -> Int {
    let pool = self.pool
    return await withCheckedContinuation { continuation in
      loop.execute { continuation.resume(returning: pool.value.openedConnectionCount) }
    }
  }
}

extension ChannelOptions.Backoff {
  /// The backoff the fault tests use: retries start at 100 ms and never wait more than 1 s
  /// (1.2 s with jitter), so a restarted server is found again quickly.
  static var fast: Self {
    var backoff = Self()
    backoff.initial = .milliseconds(100)
    backoff.multiplier = 1.6
    backoff.jitter = 0.2
    backoff.maximum = .seconds(1)
    backoff.minimumConnectTimeout = .seconds(1)
    return backoff
  }

  /// The longest gRPC's backoff lets a channel wait between two attempts: the maximum plus
  /// its jitter.
  var longestWait: Duration { maximum * (1 + jitter) }

  /// The most connection attempts the backoff allows in `window`, the first at its start:
  /// attempt k+1 starts at least min(initial·multiplier^(k−1), maximum)·(1 − jitter) after
  /// attempt k (doc/connection-backoff.md).
  func mostAttempts(in window: Duration) -> Int {
    var attempts = 1
    var elapsed = Duration.zero
    var current = initial
    while true {
      elapsed += current * (1 - jitter)
      if elapsed > window { return attempts }
      attempts += 1
      current = min(current * multiplier, maximum)
    }
  }
}
