public import FleetConsumer

/// How fast traffic flows on a stretch of route, as the Consumer SDK's `GMTSSpeedType` has it:
/// Fleet Engine's three readings, and ``noData`` where no reading covers the stretch.
///
/// The raw value is the name the SVG writes in `data-speed`.
public enum SpeedType: String, Sendable, Hashable, CaseIterable {
  /// No speed reading covers this stretch (or the route came without traffic).
  case noData = "NO_DATA"
  /// Traffic flows freely.
  case normal = "NORMAL"
  /// Traffic is slowed down, without a jam.
  case slow = "SLOW"
  /// Traffic is jammed.
  case trafficJam = "TRAFFIC_JAM"

  /// The speed type of a Fleet Engine reading. SPEED_UNSPECIFIED (which the server never
  /// sends) and values this schema does not know say nothing about the traffic: no data.
  public init(_ speed: FleetEngine.SpeedReadingInterval.Speed) {
    switch speed {
    case .normal: self = .normal
    case .slow: self = .slow
    case .trafficJam: self = .trafficJam
    case .unspecified, .unrecognized: self = .noData
    }
  }
}
