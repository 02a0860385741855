internal import FoundationEssentials

/// Converts between real wall-clock time and a trip's simulated time.
///
/// A trip's simulated time is the seconds since it was created, times the time scale. Wall
/// times are nanoseconds since 1970, as integers, so a version computed twice from the same
/// plan is the same timestamp to the nanosecond.
struct SimulationClock: Sendable {
  let timeScale: Double

  /// The current wall-clock time in nanoseconds since 1970.
  static func now() -> Int64 {
    Int64((Date().timeIntervalSince1970 * 1e9).rounded())
  }

  /// The simulated time of a trip created at `createdAt`, at wall time `wall`.
  func simulatedTime(at wall: Int64, createdAt: Int64) -> Double {
    Double(wall - createdAt) / 1e9 * timeScale
  }

  /// The wall time at which a trip created at `createdAt` reaches simulated time `time`.
  func wallTime(at time: Double, createdAt: Int64) -> Int64 {
    createdAt + Int64((time / timeScale * 1e9).rounded())
  }
}
