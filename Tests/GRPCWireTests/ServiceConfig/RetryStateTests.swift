import Testing

@testable import GRPCWire

/// The retry policy's decisions, the throttle's arithmetic and the pushback's parsing, as
/// values (proposal A6).
@Suite("Retry state, throttle and pushback")
struct RetryStateTests {
  static let policy = ServiceConfig.RetryPolicy(
    maxAttempts: 4, initialBackoff: .milliseconds(100), maxBackoff: .milliseconds(300),
    backoffMultiplier: 2, retryableStatusCodes: [.unavailable])

  static func failure(_ code: StatusCode, pushback: String? = nil) -> RPCError {
    var error = RPCError(code: code, message: "failed")
    error.retryPushback = pushback.map(RetryPushback.init(headerValue:))
    return error
  }

  @Test(
    "grpc-retry-pushback-ms: a non-negative integer is a delay, anything else says stop",
    arguments: [
      ("0", RetryPushback.retry(after: .zero)), ("250", .retry(after: .milliseconds(250))),
      ("-1", .stop), ("soon", .stop), ("", .stop), ("4294967296", .stop),
    ])
  func pushback(value: String, expected: RetryPushback) {
    #expect(RetryPushback(headerValue: value) == expected)
  }

  @Test("delays stay under a ceiling that doubles up to maxBackoff; the 4th failure ends the call")
  func backoffCeilings() {
    var state = RetryState(Self.policy)
    for ceiling in [100, 200, 300] {
      guard
        case .retry(let delay) = state.afterFailure(
          Self.failure(.unavailable), committed: false, throttle: nil)
      else {
        Issue.record("not retried under a ceiling of \(ceiling) ms")
        return
      }
      #expect(delay >= .zero && delay <= .milliseconds(ceiling), "\(delay) over \(ceiling) ms")
    }
    #expect(state.attempts == 4)
    #expect(
      state.afterFailure(Self.failure(.unavailable), committed: false, throttle: nil)
        == .fail("all 4 attempts were made"))
  }

  @Test("a committed call, a code that is not retryable and a stop pushback end the call")
  func noRetry() {
    var state = RetryState(Self.policy)
    #expect(
      state.afterFailure(Self.failure(.unavailable), committed: true, throttle: nil)
        == .fail("response headers had arrived: the call is committed"))
    #expect(
      state.afterFailure(Self.failure(.invalidArgument), committed: false, throttle: nil)
        == .fail("INVALID_ARGUMENT is not a retryable status code"))
    #expect(
      state.afterFailure(
        Self.failure(.unavailable, pushback: "-5"), committed: false, throttle: nil)
        == .fail("the server's pushback said not to retry"))
    #expect(state.attempts == 1)
  }

  @Test("a pushback sets the delay and the next backoff starts again from initialBackoff")
  func pushbackResetsBackoff() {
    var state = RetryState(Self.policy)
    _ = state.afterFailure(Self.failure(.unavailable), committed: false, throttle: nil)
    #expect(
      state.afterFailure(
        Self.failure(.unavailable, pushback: "700"), committed: false, throttle: nil)
        == .retry(after: .milliseconds(700)))
    guard
      case .retry(let delay) = state.afterFailure(
        Self.failure(.unavailable), committed: false, throttle: nil)
    else {
      Issue.record("not retried after the pushback")
      return
    }
    #expect(delay <= .milliseconds(100))
  }

  @Test("the throttle: failures take 1, successes give tokenRatio, retries only above half")
  func throttle() {
    let throttle = RetryThrottle(.init(maxTokens: 3, tokenRatio: 0.25))
    #expect(throttle.allowsRetry && throttle.tokenCount == 3)
    throttle.recordFailure()
    #expect(throttle.allowsRetry && throttle.tokenCount == 2)
    throttle.recordFailure()
    #expect(!throttle.allowsRetry && throttle.tokenCount == 1)
    throttle.recordSuccess()
    throttle.recordSuccess()
    #expect(throttle.tokenCount == 1.5 && !throttle.allowsRetry)
    throttle.recordSuccess()
    #expect(throttle.tokenCount == 1.75 && throttle.allowsRetry)
    for _ in 0..<10 { throttle.recordSuccess() }
    #expect(throttle.tokenCount == 3)
    for _ in 0..<5 { throttle.recordFailure() }
    #expect(throttle.tokenCount == 0)
  }

  @Test("an INVALID_ARGUMENT does not count against the throttle; a stop pushback does")
  func throttleCounts() {
    let throttle = RetryThrottle(.init(maxTokens: 10, tokenRatio: 1))
    var state = RetryState(Self.policy)
    _ = state.afterFailure(Self.failure(.invalidArgument), committed: false, throttle: throttle)
    #expect(throttle.tokenCount == 10)
    _ = state.afterFailure(
      Self.failure(.invalidArgument, pushback: "-1"), committed: false, throttle: throttle)
    #expect(throttle.tokenCount == 9)
  }
}
