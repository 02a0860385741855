import FleetConsumer
import FleetSync
import Foundation

/// The one subscriber of every followed trip: counts updates and failures of the current
/// phase and records each update's callback latency.
final class UpdateCounter: TripModelSubscriber {
  private struct State {
    var phase: LoadPhase?
    var tally = LatencyRecorder.Tally()
    /// Updates counted, kept apart from `tally.codes` until ``end()``: a String-keyed
    /// dictionary entry per update was the tool's own cost in the client CPU it reports.
    var updates = 0
    var completedTrips = 0
    /// The models updated in the measured phase, to tell whether every trip is followed.
    var updatedModels = Set<ObjectIdentifier>()
  }

  private let state = PosixMutex(State())

  /// Starts counting for `phase`, forgetting what was counted before.
  func begin(_ phase: LoadPhase) {
    state.withLock {
      $0.phase = phase
      $0.tally = LatencyRecorder.Tally()
      $0.updates = 0
      $0.updatedModels = []
    }
  }

  /// Stops counting; returns what the phase counted.
  func end() -> LatencyRecorder.Tally {
    state.withLock {
      $0.phase = nil
      var tally = $0.tally
      if $0.updates > 0 { tally.codes["OK", default: 0] += $0.updates }
      return tally
    }
  }

  /// Updates counted in the current phase so far.
  func measuredCount() -> Int { state.withLock { $0.updates } }

  var completedTrips: Int { state.withLock { $0.completedTrips } }

  /// Trips updated at least once in the current (or last) phase.
  var tripsUpdated: Int { state.withLock { $0.updatedModels.count } }

  func tripModel(
    _ model: TripModel, didUpdate trip: FleetEngine.Trip,
    updatedPropertyFields: TripModelUpdatedPropertyFields
  ) {
    let now = Int64((Date().timeIntervalSince1970 * 1e9).rounded())
    var latency: UInt64?
    if let stamp = trip.lastLocation?.serverTime {
      let stamped = stamp.seconds * 1_000_000_000 + Int64(stamp.nanos)
      latency = UInt64(max(now - stamped, 0))
    }
    state.withLock { state in
      guard let phase = state.phase, phase.completed() else { return }
      state.updates += 1
      state.updatedModels.insert(ObjectIdentifier(model))
      // An update without a location stamp counts, but has no latency to show.
      if let latency {
        state.tally.record(min(latency, LatencyRecorder.highestTrackable))
      }
    }
  }

  func tripModel(_ model: TripModel, didUpdateTripStatus status: FleetEngine.TripStatus) {
    guard status.isTerminal else { return }
    state.withLock { $0.completedTrips += 1 }
  }

  func tripModel(_ model: TripModel, didFailUpdateTripWithError error: RPCError) {
    state.withLock { state in
      guard let phase = state.phase, !phase.isStopped else { return }
      state.tally.codes[error.code.name, default: 0] += 1
      state.tally.errors[error.message, default: 0] += 1
    }
  }
}
