import FleetConsumer
import Foundation
import Testing

@Suite("Retry policy by error category")
struct RetryPolicyTests {
  private let policy = RetryPolicy(
    initialBackoff: .seconds(1), maximumBackoff: .seconds(60), multiplier: 1.6, jitter: 0.2,
    clientErrorSlowdown: 4)

  private func error(_ code: StatusCode) -> RPCError { RPCError(code: code, message: "x") }

  private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  @Test("server and network errors back off 1, 1.6, 2.56 … up to the maximum")
  func serverOrNetwork() {
    let steps = (1...12).map {
      seconds(policy.delay(after: error(.unavailable), consecutiveFailures: $0, random: 0.5))
    }
    #expect(abs(steps[0] - 1) < 1e-9)
    #expect(abs(steps[1] - 1.6) < 1e-9)
    #expect(abs(steps[2] - 2.56) < 1e-9)
    #expect(steps.last == 60)
    #expect(zip(steps, steps.dropFirst()).allSatisfy { $0 <= $1 })
  }

  @Test("jitter spreads a delay by ±20 %")
  func jitter() {
    let low = seconds(policy.delay(after: error(.aborted), consecutiveFailures: 1, random: 0))
    let high = seconds(
      policy.delay(after: error(.aborted), consecutiveFailures: 1, random: 0.999_999))
    #expect(abs(low - 0.8) < 1e-9)
    #expect(abs(high - 1.2) < 1e-5)
  }

  @Test(
    "client errors wait four times longer, capped at the maximum",
    arguments: [
      StatusCode.invalidArgument, .notFound, .permissionDenied, .resourceExhausted,
      .unauthenticated,
    ])
  func client(code: StatusCode) {
    #expect(seconds(policy.delay(after: error(code), consecutiveFailures: 1, random: 0.5)) == 4)
    #expect(seconds(policy.delay(after: error(code), consecutiveFailures: 20, random: 0.5)) == 60)
  }

  @Test(
    "other errors wait the longest backoff from the first",
    arguments: [
      StatusCode.unknown, .internalError, .unimplemented, .dataLoss, .failedPrecondition,
      .outOfRange, .alreadyExists,
    ])
  func other(code: StatusCode) {
    #expect(seconds(policy.delay(after: error(code), consecutiveFailures: 1, random: 0)) == 60)
    #expect(seconds(policy.delay(after: error(code), consecutiveFailures: 1, random: 0.5)) == 54)
  }

  @Test("an interrupted connection is a network error whatever else")
  func interrupted() {
    let interrupted = RPCError.interrupted("the peer reset the connection")
    #expect(seconds(policy.delay(after: interrupted, consecutiveFailures: 2, random: 0.5)) == 1.6)
  }

  private func error(_ code: StatusCode, retryDelay delay: GoogleProtobuf.Duration) -> RPCError {
    .fromServer(code, message: "slow down", retryDelay: delay)
  }

  @Test("a RetryInfo delay is never cut short, even past the maximum")
  func retryInfoLonger() {
    var delay = GoogleProtobuf.Duration()
    delay.seconds = 90
    let error = error(.resourceExhausted, retryDelay: delay)
    #expect(error.retryDelay == .seconds(90))
    #expect(policy.delay(after: error, consecutiveFailures: 1, random: 0.5) == .seconds(90))
  }

  @Test("a short RetryInfo delay does not shorten the backoff")
  func retryInfoShorter() {
    var delay = GoogleProtobuf.Duration()
    delay.nanos = 1_000_000
    let error = error(.unavailable, retryDelay: delay)
    #expect(error.retryDelay == .milliseconds(1))
    #expect(policy.delay(after: error, consecutiveFailures: 1, random: 0.5) == .seconds(1))
  }
}
