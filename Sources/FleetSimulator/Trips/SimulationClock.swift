internal import FoundationEssentials

/// Converts between real wall-clock time and a trip's simulated time.
///
/// A trip's simulated time is the seconds since it was created, times the time scale. Wall
/// times are nanoseconds since 1970, as integers, so a version computed twice from the same
/// plan is the same timestamp to the nanosecond.
struct SimulationClock: Sendable {
  let timeScale: Double
  /// When set, the clock moves in whole steps of this many (real) nanoseconds: every trip
  /// holds still between steps, so any observer that looks more often than once a step sees
  /// exactly the same sequence of states (see SimulatorOptions.clockStep).
  var step: Int64? = nil
  /// When set, every trip's simulated time is this, whatever the wall clock says (see
  /// SimulatorOptions.frozenAt).
  var frozenAt: Double? = nil

  /// The current wall-clock time in nanoseconds since 1970.
  static func realNow() -> Int64 {
    Int64((Date().timeIntervalSince1970 * 1e9).rounded())
  }

  /// The simulation's "now": the wall-clock time, rounded down to the last step if stepping.
  func now() -> Int64 {
    let wall = Self.realNow()
    guard let step, step > 0 else { return wall }
    return wall - wall % step
  }

  /// The simulated time of a trip created at `createdAt`, at wall time `wall`.
  func simulatedTime(at wall: Int64, createdAt: Int64) -> Double {
    if let frozenAt { return frozenAt }
    return Double(wall - createdAt) / 1e9 * timeScale
  }

  /// The wall time at which a trip created at `createdAt` reaches simulated time `time`.
  func wallTime(at time: Double, createdAt: Int64) -> Int64 {
    createdAt + Int64((time / timeScale * 1e9).rounded())
  }
}
