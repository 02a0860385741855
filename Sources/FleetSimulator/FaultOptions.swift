public import GRPCWire

/// Faults a ``FleetSimulator`` injects, for testing how clients cope.
///
/// All durations here are real time. Error injection and latency apply to every method;
/// a `WatchTrip` stream is failed or delayed before its first message.
public struct FaultOptions: Sendable, Hashable {
  /// The share of calls (0...1) answered with ``failureCode`` instead of being served.
  public var failureRate: Double = 0
  /// The status of injected failures.
  public var failureCode: StatusCode = .unavailable
  /// When set, injected failures carry a `google.rpc.RetryInfo` with this delay.
  public var retryDelay: Duration? = nil
  /// Added before every call is answered.
  public var latency: Duration = .zero
  /// The share of calls (0...1) whose TCP connection is closed at once, without GOAWAY:
  /// every call on that connection sees it drop.
  public var dropConnectionRate: Double = 0
  /// When set, the server is restarted this often: every connection gets GOAWAY, calls in
  /// flight may finish for ``goAwayGracePeriod`` and are then cancelled, the connections
  /// close, and the server listens again on the same port at once. Trips are unaffected. A
  /// connection attempt in the instant between the old socket closing and the new one
  /// listening (about a millisecond) is refused, as during a real server restart.
  public var goAwayInterval: Duration? = nil
  /// How long calls in flight may finish after a GOAWAY; zero ends them at once (UNAVAILABLE)
  /// and drops their connections.
  public var goAwayGracePeriod: Duration = .seconds(1)

  /// No faults.
  public init() {}

  /// Whether any fault is configured.
  public var isEnabled: Bool {
    failureRate > 0 || latency > .zero || goAwayInterval != nil || dropConnectionRate > 0
  }

  /// Why these options cannot be used, or nil when they can.
  public var problem: String? {
    if !(0...1).contains(failureRate) { return "the failure rate must be within 0...1" }
    if !(0...1).contains(dropConnectionRate) { return "the drop rate must be within 0...1" }
    if failureCode == .ok { return "the failure code must not be OK" }
    if latency < .zero { return "the latency must not be negative" }
    if let retryDelay, retryDelay < .zero { return "the retry delay must not be negative" }
    if let goAwayInterval, goAwayInterval <= .zero { return "the GOAWAY interval must be positive" }
    if goAwayGracePeriod < .zero { return "the GOAWAY grace period must not be negative" }
    return nil
  }
}
