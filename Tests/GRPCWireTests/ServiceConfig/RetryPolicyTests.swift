import FleetSync
import Foundation
import Logging
import MetricsTestKit
import PeerSupport
import Testing

@testable import GRPCWire

/// The service config's retry and hedging policies and its retry throttle at work against
/// grpcio's server (Tests/Python/retry_server.py), whose servicer fails the first N attempts
/// of a call with a chosen code and prints when each attempt arrived, what
/// `grpc-previous-rpc-attempts` it carried, and whether it was cancelled.
@Suite("Retries, hedging and throttling against grpcio", .timeLimit(.minutes(3)))
struct RetryPolicyTests {
  static let unary = "/fleet.test.Retry/Unary"
  static let stream = "/fleet.test.Retry/Stream"

  /// Runs `body` with a fresh retry_server.py servicer and a channel to it under the service
  /// config `json`; the channel is closed and the servicer stopped (by PID) afterwards.
  static func withRetryServer(
    _ json: String, metrics: TestMetrics? = nil, log: TimedLog? = nil,
    _ body: (PeerServer, GRPCChannel) async throws -> Void
  ) async throws {
    try await withPeerServer("retry_server.py") { server in
      var options = ChannelOptions()
      options.serviceConfig = try ServiceConfig(json: json)
      if let metrics { options.metricsFactory = metrics }
      if let log {
        options.logger = Logger(label: "retries") { _ in log }
        options.logger.logLevel = .debug
      }
      let channel = GRPCChannel(host: "127.0.0.1", port: server.port, options: options)
      defer { channel.close() }
      try await body(server, channel)
    }
  }

  /// The servicer's hooks for call `id` (see retry_server.py).
  static func hooks(
    _ id: String, fail: Int = 0, code: StatusCode = .unavailable, pushback: String? = nil,
    delay: Duration? = nil, succeedAttempt: Int? = nil, failAfterFirst: Bool = false
  ) -> Metadata {
    var metadata = Metadata()
    metadata.add("x-retry-call", id)
    metadata.add("x-retry-fail", "\(fail)")
    metadata.add("x-retry-code", "\(code.rawValue)")
    if let pushback { metadata.add("x-retry-pushback-ms", pushback) }
    if let delay { metadata.add("x-retry-delay-ms", "\(delay.milliseconds)") }
    if let succeedAttempt { metadata.add("x-retry-succeed-attempt", "\(succeedAttempt)") }
    if failAfterFirst { metadata.add("x-retry-fail-after-first", "1") }
    return metadata
  }

  /// A unary call with `metadata`; its response (the request echoed) or its error.
  static func call(_ channel: GRPCChannel, _ metadata: Metadata) async -> Result<String, RPCError> {
    do {
      let response = try await channel.unary(
        path: unary, request: Array("hello".utf8), serializer: RawBytesSerializer(),
        deserializer: RawBytesDeserializer(),
        options: CallOptions(timeout: .seconds(30), metadata: metadata))
      return .success(String(decoding: response.message, as: UTF8.self))
    } catch let error as RPCError {
      return .failure(error)
    } catch {
      return .failure(RPCError(code: .unknown, message: "not an RPCError: \(error)"))
    }
  }

  /// Makes call `id` with `hooks`, which must fail: its error and all the attempts the
  /// servicer saw of it.
  static func failedCall(
    _ server: PeerServer, _ channel: GRPCChannel, _ id: String, _ hooks: Metadata
  ) async throws -> (error: RPCError, attempts: [PeerEvent]) {
    let outcome = await call(channel, hooks)
    guard case .failure(let error) = outcome else {
      throw RPCError(code: .unknown, message: "call \(id) was to fail; it gave \(outcome)")
    }
    return (error, try await settledAttempts(server, channel, id))
  }

  /// The servicer's `attempt` events of call `id`, once it has seen `count`, in order.
  static func attempts(
    _ server: PeerServer, _ id: String, count: Int
  ) async throws -> [PeerEvent] {
    _ = try await server.waitForEvent("attempt") { $0["call"] == id && $0["n"] == "\(count)" }
    return server.events.filter { $0.kind == "attempt" && $0["call"] == id }
  }

  /// The servicer's `attempt` events of call `id`, which has ended: a later call's attempt
  /// proves that the servicer printed all of them.
  static func settledAttempts(
    _ server: PeerServer, _ channel: GRPCChannel, _ id: String
  ) async throws -> [PeerEvent] {
    _ = await call(channel, hooks("after-\(id)"))
    _ = try await server.waitForEvent("attempt") { $0["call"] == "after-\(id)" }
    return server.events.filter { $0.kind == "attempt" && $0["call"] == id }
  }

  /// Nanoseconds between the servicer's events `a` and `b` (its monotonic clock), as a
  /// duration.
  static func gap(_ a: PeerEvent, _ b: PeerEvent) -> Duration {
    .nanoseconds(Int64(b["t"]!)! - Int64(a["t"]!)!)
  }

  static func retryConfig(
    maxAttempts: Int, initial: String, max: String, multiplier: Double = 2,
    codes: String = #""UNAVAILABLE""#, throttling: String = ""
  ) -> String {
    """
    {"methodConfig": [{"name": [{"service": "fleet.test.Retry"}],
      "retryPolicy": {"maxAttempts": \(maxAttempts), "initialBackoff": "\(initial)",
        "maxBackoff": "\(max)", "backoffMultiplier": \(multiplier),
        "retryableStatusCodes": [\(codes)]}}]\(throttling)}
    """
  }

  @Test(
    "a call failing 3 attempts with a retryable code succeeds on the 4th, each retry within its backoff ceiling, grpc-previous-rpc-attempts counting"
  )
  func retriesPerPolicy() async throws {
    let metrics = TestMetrics()
    let log = TimedLog()
    try await Self.withRetryServer(
      Self.retryConfig(maxAttempts: 4, initial: "0.2s", max: "0.5s"), metrics: metrics, log: log
    ) { server, channel in
      // Eight calls, one after the other, each failing three attempts: 24 backoffs, timed
      // in the client (the log's instants), where the servicer's clock would add its own
      // scheduling on a loaded machine.
      let ids = (0..<8).map { "retry-\($0)" }
      for id in ids {
        let outcome = await Self.call(channel, Self.hooks(id, fail: 3))
        #expect((try? outcome.get()) == "hello", "\(outcome)")
        let attempts = try await Self.attempts(server, id, count: 4)
        #expect(attempts.map { $0["previous"]! } == ["-", "1", "2", "3"], "\(attempts)")
      }
      // Each delay is drawn from [0, ceiling]: 0.2 s, 0.4 s, then 0.5 s (maxBackoff); the next
      // attempt starts no earlier than that.
      let ceilings: [Duration] = [.milliseconds(200), .milliseconds(400), .milliseconds(500)]
      let retries = log.retries()
      #expect(retries.count == 24)
      for (index, retry) in retries.enumerated() {
        let ceiling = ceilings[index % 3]
        #expect(retry.delay >= .zero && retry.delay <= ceiling, "retry \(index): \(retry.delay)")
        let waited = retry.decided.duration(to: try #require(retry.next))
        #expect(waited >= retry.delay, "retry \(index) waited \(waited), not \(retry.delay)")
      }
      // Uniform in [0, 200 ms]: eight first draws all under 20 ms would mean no backoff at all.
      let firstDelays = stride(from: 0, to: retries.count, by: 3).map { retries[$0].delay }
      #expect(firstDelays.contains { $0 > .milliseconds(20) }, "\(firstDelays)")
      let dimensions = [
        ("rpc.system", "grpc"), ("rpc.service", "fleet.test.Retry"), ("rpc.method", "Unary"),
      ]
      let attemptsRecorder = try metrics.expectRecorder("rpc.client.attempts_per_rpc", dimensions)
      #expect(attemptsRecorder.values == Array(repeating: 4, count: 8))
      let retryCount = try metrics.expectCounter("rpc.client.retries", dimensions)
      #expect(retryCount.totalValue == 24)
    }
  }

  @Test("a call stops after maxAttempts and fails with the last attempt's status")
  func attemptsExhausted() async throws {
    try await Self.withRetryServer(
      Self.retryConfig(maxAttempts: 3, initial: "0.01s", max: "0.01s")
    ) { server, channel in
      let (error, attempts) = try await Self.failedCall(
        server, channel, "exhausted", Self.hooks("exhausted", fail: 10))
      #expect(error.code == .unavailable && error.message == "attempt 3 fails as asked", "\(error)")
      #expect(attempts.map { $0["previous"]! } == ["-", "1", "2"], "\(attempts)")
    }
  }

  @Test("a status code not in retryableStatusCodes is not retried")
  func nonRetryable() async throws {
    try await Self.withRetryServer(
      Self.retryConfig(maxAttempts: 5, initial: "0.01s", max: "0.01s")
    ) { server, channel in
      let (error, attempts) = try await Self.failedCall(
        server, channel, "invalid", Self.hooks("invalid", fail: 1, code: .invalidArgument))
      #expect(error.code == .invalidArgument, "\(error)")
      #expect(attempts.count == 1, "\(attempts)")
    }
  }

  @Test(
    "the server's grpc-retry-pushback-ms sets the next attempt's delay; a negative one stops retries"
  )
  func pushback() async throws {
    // A 1 ms backoff: a retry 400 ms later can only be the pushback's doing.
    let log = TimedLog()
    try await Self.withRetryServer(
      Self.retryConfig(maxAttempts: 3, initial: "0.001s", max: "0.001s"), log: log
    ) { server, channel in
      let pushed = await Self.call(channel, Self.hooks("pushed", fail: 1, pushback: "400"))
      #expect((try? pushed.get()) == "hello", "\(pushed)")
      #expect(try await Self.attempts(server, "pushed", count: 2).count == 2)
      let retry = try #require(log.retries().first)
      #expect(retry.delay == .milliseconds(400))
      let waited = retry.decided.duration(to: try #require(retry.next))
      #expect(waited >= .milliseconds(400), "\(waited)")

      let stopped = try await Self.failedCall(
        server, channel, "stopped", Self.hooks("stopped", fail: 2, pushback: "-1"))
      #expect(stopped.error.code == .unavailable, "\(stopped.error)")
      #expect(stopped.attempts.count == 1, "\(stopped.attempts)")
    }
  }

  @Test(
    "hedged attempts start hedgingDelay apart; the first OK wins and the servicer sees the others CANCELLED"
  )
  func hedging() async throws {
    let starts = TimedLog()
    try await Self.withRetryServer(
      """
      {"methodConfig": [{"name": [{"service": "fleet.test.Retry", "method": "Unary"}],
        "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.3s",
          "nonFatalStatusCodes": ["UNAVAILABLE"]}}]}
      """, log: starts
    ) { server, channel in
      // Attempts 1 and 2 would answer after 30 s; attempt 3 answers at once.
      let started = ContinuousClock.now
      let outcome = await Self.call(
        channel, Self.hooks("hedged", delay: .seconds(30), succeedAttempt: 3))
      let took = started.duration(to: .now)
      #expect((try? outcome.get()) == "hello", "\(outcome)")
      // The losers would have answered after 30 s: the call did not wait for them.
      #expect(took < .seconds(30), "the hedged call took \(took)")
      let attempts = try await Self.attempts(server, "hedged", count: 3)
      #expect(attempts.map { $0["previous"]! } == ["-", "1", "2"], "\(attempts)")
      // Measured where the attempts start, in the client: where the servicer sees them
      // arrive, a loaded machine's scheduling of the Python process adds up to a second.
      // No attempt starts before its hedgingDelay (a timer never fires early).
      let launched = starts.instants(of: "call attempt started")
      #expect(launched.count == 3, "\(launched)")
      let gaps = zip(launched, launched.dropFirst()).map { $0.duration(to: $1) }
      for gap in gaps { #expect(gap >= .milliseconds(300), "\(gaps)") }
      for loser in ["1", "2"] {
        let cancelled = try await server.waitForEvent("cancelled", timeout: .seconds(30)) {
          $0["call"] == "hedged" && $0["n"] == loser
        }
        #expect(cancelled.path == Self.unary)
      }
    }
  }

  @Test("a fatal status on a hedged attempt ends the call at once and cancels the others")
  func hedgingFatal() async throws {
    try await Self.withRetryServer(
      """
      {"methodConfig": [{"name": [{"service": "fleet.test.Retry"}],
        "hedgingPolicy": {"maxAttempts": 2, "hedgingDelay": "0.1s",
          "nonFatalStatusCodes": ["UNAVAILABLE"]}}]}
      """
    ) { server, channel in
      // Attempt 1 hangs 30 s, attempt 2 fails at once with PERMISSION_DENIED (fatal).
      let outcome = await Self.call(
        channel,
        Self.hooks("fatal", fail: 2, code: .permissionDenied, delay: .seconds(30), succeedAttempt: 2)
      )
      guard case .failure(let error) = outcome else {
        Issue.record("the call did not fail: \(outcome)")
        return
      }
      #expect(error.code == .permissionDenied, "\(error)")
      _ = try await server.waitForEvent("cancelled", timeout: .seconds(30)) {
        $0["call"] == "fatal" && $0["n"] == "1"
      }
    }
  }

  @Test(
    "throttling stops retries once failures take the tokens to half of maxTokens, and retries resume after successes"
  )
  func throttling() async throws {
    // 4 tokens, 0.5 back per success; retries only above 2 tokens.
    try await Self.withRetryServer(
      Self.retryConfig(
        maxAttempts: 2, initial: "0.001s", max: "0.001s",
        throttling: #", "retryThrottling": {"maxTokens": 4, "tokenRatio": 0.5}"#)
    ) { server, channel in
      func attemptCount(_ id: String) async throws -> Int {
        try await Self.settledAttempts(server, channel, id).count
      }
      // 4 → 3 (retried) → 2: both attempts fail.
      _ = await Self.call(channel, Self.hooks("a", fail: 5))
      let attemptsOfA = try await attemptCount("a")
      #expect(attemptsOfA == 2)
      // The call after it (settledAttempts) succeeded: 2.5. This failure: 1.5, not above 2.
      let throttled = await Self.call(channel, Self.hooks("b", fail: 1))
      #expect((try? throttled.get()) == nil, "\(throttled)")
      let attemptsOfB = try await attemptCount("b")
      #expect(attemptsOfB == 1)
      // The call after it: 2.0. Five more successes: 4 (the maximum).
      for index in 0..<5 { _ = await Self.call(channel, Self.hooks("ok-\(index)")) }
      // 4 → 3, above 2: retried, and the retry succeeds.
      let resumed = await Self.call(channel, Self.hooks("c", fail: 1))
      #expect((try? resumed.get()) == "hello", "\(resumed)")
      let attemptsOfC = try await attemptCount("c")
      #expect(attemptsOfC == 2)
    }
  }

  @Test("a server-streaming call is retried before its first response, never after it")
  func streamingCommit() async throws {
    try await Self.withRetryServer(
      Self.retryConfig(maxAttempts: 3, initial: "0.01s", max: "0.01s")
    ) { server, channel in
      func stream(_ metadata: Metadata) async -> (messages: Int, error: RPCError?) {
        var count = 0
        do {
          try await channel.serverStreaming(
            path: Self.stream, request: Array("hi".utf8), serializer: RawBytesSerializer(),
            deserializer: RawBytesDeserializer(),
            options: CallOptions(timeout: .seconds(30), metadata: metadata)
          ) { responses in
            for try await _ in responses { count += 1 }
          }
          return (count, nil)
        } catch {
          return (count, error as? RPCError ?? RPCError(code: .unknown, message: "\(error)"))
        }
      }
      // Failing before any response (trailers only): retried, then all three messages.
      let early = await stream(Self.hooks("early", fail: 1))
      #expect(early.messages == 3 && early.error == nil, "\(early)")
      let early2 = try await Self.attempts(server, "early", count: 2)
      #expect(early2.count == 2, "\(early2)")

      // Failing after its first response: the caller has it, and the UNAVAILABLE after it.
      let late = await stream(Self.hooks("late", fail: 1, failAfterFirst: true))
      #expect(late.messages == 1 && late.error?.code == .unavailable, "\(late)")
      let lateAttempts = try await Self.settledAttempts(server, channel, "late")
      #expect(lateAttempts.count == 1, "\(lateAttempts)")
    }
  }
}

/// A log handler that keeps when each message was logged, for tests that time what the
/// channel does.
struct TimedLog: LogHandler {
  /// When, what, and the call's attempt number and retry delay (ms) when logged.
  let entries = PosixMutex<[(ContinuousClock.Instant, String, Logger.Metadata)]>([])
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .trace

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    let now = ContinuousClock.now
    let all = metadata.merging(event.metadata ?? [:]) { $1 }
    entries.withLock { $0.append((now, "\(event.message)", all)) }
  }

  /// When `message` was logged, in order.
  func instants(of message: String) -> [ContinuousClock.Instant] {
    entries.withLock { $0.filter { $0.1 == message }.map(\.0) }
  }

  /// Each retry's delay as drawn, the instant it was decided, and the instant the next
  /// attempt started, per call (`grpc.attempt` orders them; calls are told apart by order of
  /// their log lines, so this is for one call at a time).
  func retries() -> [(delay: Duration, decided: ContinuousClock.Instant, next: ContinuousClock.Instant?)] {
    let all = entries.withLock { $0 }
    var found: [(Duration, ContinuousClock.Instant, ContinuousClock.Instant?)] = []
    for (index, entry) in all.enumerated() where entry.1.hasPrefix("call attempt failed; retrying") {
      guard case .string(let text)? = entry.2["grpc.retry_delay_ms"], let ms = Double(text) else {
        continue
      }
      let next = all[(index + 1)...].first { $0.1 == "call attempt started" }?.0
      found.append((.nanoseconds(Int64(ms * 1_000_000)), entry.0, next))
    }
    return found
  }
}
