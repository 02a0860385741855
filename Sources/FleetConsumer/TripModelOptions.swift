/// How one ``TripModel`` follows its trip, set with ``TripModel/options`` at any time (iOS
/// `GMTCTripModelOptions`, Android `TripModelOptions`).
public struct TripModelOptions: Sendable, Hashable {
  /// Time between polls of this trip; nil: the service's
  /// ``TripService/Options/pollInterval``.
  public let pollInterval: Duration?

  /// The service's settings.
  public init() {
    pollInterval = nil
  }

  /// Polls every `pollInterval` (nil: the service's interval). Throws when it is under
  /// 100 ms, the least a service accepts too.
  public init(pollInterval: Duration?) throws(TripService.ConfigurationError) {
    if let pollInterval, pollInterval < .milliseconds(100) {
      throw TripService.ConfigurationError(
        "the poll interval must be at least 100 ms, not \(pollInterval)")
    }
    self.pollInterval = pollInterval
  }
}
