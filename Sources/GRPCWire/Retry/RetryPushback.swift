/// What a server's `grpc-retry-pushback-ms` trailer asks of a call's retry or hedging policy
/// (proposal A6, "Pushback"): the next attempt after exactly this delay, or no further attempt.
enum RetryPushback: Sendable, Hashable {
  case retry(after: Duration)
  case stop

  /// The header's value: a non-negative 32-bit integer of milliseconds asks for a retry then;
  /// anything else (negative, unparseable) asks for none, as A6 says.
  init(headerValue: String) {
    if let milliseconds = Int32(headerValue), milliseconds >= 0 {
      self = .retry(after: .milliseconds(milliseconds))
    } else {
      self = .stop
    }
  }
}
