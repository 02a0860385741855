import FleetConsumer
import FleetSync
import Foundation

/// A subscriber that records every callback as a ``TripModelEvent``, notices overlapping
/// callbacks, and lets a test wait for what it expects.
final class RecordingSubscriber: TripModelSubscriber {
  private struct State {
    var events: [TripModelEvent] = []
    var inCallback = false
    var overlaps = 0
    var waiters: [UInt64: Waiter] = [:]
    var nextWaiter: UInt64 = 0
  }

  private struct Waiter {
    var predicate: @Sendable ([TripModelEvent]) -> Bool
    var continuation: CheckedContinuation<[TripModelEvent], any Error>
  }

  private let state = PosixMutex(State())
  /// Runs inside each callback after it was recorded (to unregister from a callback, say).
  let onEvent: (@Sendable (RecordingSubscriber, TripModel, TripModelEvent) -> Void)?

  /// Whether it asked for ``TripModelSubscriber/tripModel(_:didRefreshAt:)``.
  let receivesRefreshes: Bool

  init(
    receivesRefreshes: Bool = false,
    onEvent: (@Sendable (RecordingSubscriber, TripModel, TripModelEvent) -> Void)? = nil
  ) {
    self.receivesRefreshes = receivesRefreshes
    self.onEvent = onEvent
  }

  /// Everything received so far.
  var events: [TripModelEvent] { state.withLock { $0.events } }

  /// How many callbacks began while another was still running (must stay 0).
  var overlaps: Int { state.withLock { $0.overlaps } }

  /// Waits until the events so far satisfy `predicate`; returns them.
  @discardableResult
  func wait(
    _ what: String, timeout: Duration = .seconds(10),
    until predicate: @escaping @Sendable ([TripModelEvent]) -> Bool
  ) async throws -> [TripModelEvent] {
    let id = state.withLock { state in
      state.nextWaiter += 1
      return state.nextWaiter
    }
    return try await withThrowingTaskGroup(of: [TripModelEvent].self) { group in
      group.addTask {
        try await withTaskCancellationHandler {
          try await withCheckedThrowingContinuation { continuation in
            let now: [TripModelEvent]? = self.state.withLock { state in
              if predicate(state.events) { return state.events }
              state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
              return nil
            }
            if let now { continuation.resume(returning: now) }
          }
        } onCancel: {
          let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
          waiter?.continuation.resume(throwing: CancellationError())
        }
      }
      group.addTask {
        try await Task.sleep(for: timeout)
        throw WaitTimeout(what: what, events: self.events)
      }
      let result = try await group.next()!
      group.cancelAll()
      return result
    }
  }

  private func record(_ model: TripModel, _ event: TripModelEvent) {
    let ready = state.withLock {
      state -> [(CheckedContinuation<[TripModelEvent], any Error>, [TripModelEvent])] in
      if state.inCallback { state.overlaps += 1 }
      state.inCallback = true
      state.events.append(event)
      var ready: [(CheckedContinuation<[TripModelEvent], any Error>, [TripModelEvent])] = []
      for (id, waiter) in state.waiters where waiter.predicate(state.events) {
        state.waiters[id] = nil
        ready.append((waiter.continuation, state.events))
      }
      return ready
    }
    for (continuation, events) in ready { continuation.resume(returning: events) }
    onEvent?(self, model, event)
    state.withLock { $0.inCallback = false }
  }

  func tripModel(
    _ model: TripModel, didUpdate trip: FleetEngine.Trip,
    updatedPropertyFields: TripModelUpdatedPropertyFields
  ) { record(model, .tripUpdated(trip, updatedPropertyFields)) }
  func tripModel(_ model: TripModel, didUpdateTripStatus status: FleetEngine.TripStatus) {
    record(model, .tripStatus(status))
  }
  func tripModel(_ model: TripModel, didUpdateActiveRouteRemainingDistance meters: Int32?) {
    record(model, .activeRouteRemainingDistance(meters))
  }
  func tripModel(_ model: TripModel, didUpdateActiveRoute points: [GoogleType.LatLng]) {
    record(model, .activeRoute(points))
  }
  func tripModel(
    _ model: TripModel, didUpdateVehicleLocation location: FleetEngine.VehicleLocation?
  ) { record(model, .vehicleLocation(location)) }
  func tripModel(
    _ model: TripModel, didUpdatePickupLocation location: FleetEngine.TerminalLocation?
  ) { record(model, .pickupLocation(location)) }
  func tripModel(
    _ model: TripModel, didUpdateDropoffLocation location: FleetEngine.TerminalLocation?
  ) { record(model, .dropoffLocation(location)) }
  func tripModel(_ model: TripModel, didUpdatePickupETA eta: Date?) {
    record(model, .pickupETA(eta))
  }
  func tripModel(_ model: TripModel, didUpdateDropoffETA eta: Date?) {
    record(model, .dropoffETA(eta))
  }
  func tripModel(
    _ model: TripModel, didUpdateRemainingWaypoints waypoints: [FleetEngine.TripWaypoint]
  ) { record(model, .remainingWaypoints(waypoints)) }
  func tripModel(
    _ model: TripModel,
    didUpdateIntermediateDestinations destinations: [FleetEngine.TerminalLocation]
  ) { record(model, .intermediateDestinations(destinations)) }
  func tripModel(
    _ model: TripModel,
    didUpdateActiveRouteTraffic traffic: FleetEngine.ConsumableTrafficPolyline?
  ) { record(model, .activeRouteTraffic(traffic)) }
  func tripModel(_ model: TripModel, didUpdateETAToNextWaypoint eta: Date?) {
    record(model, .etaToNextWaypoint(eta))
  }
  func tripModel(_ model: TripModel, didUpdateTripName name: String) {
    record(model, .tripName(name))
  }
  func tripModel(_ model: TripModel, didUpdateVehicleID vehicleID: String) {
    record(model, .vehicleID(vehicleID))
  }
  func tripModel(_ model: TripModel, didUpdateTripType type: FleetEngine.TripType) {
    record(model, .tripType(type))
  }
  func tripModel(_ model: TripModel, didUpdateNumberOfPassengers count: Int32) {
    record(model, .numberOfPassengers(count))
  }
  func tripModel(_ model: TripModel, didUpdateIntermediateDestinationIndex index: Int32?) {
    record(model, .intermediateDestinationIndex(index))
  }
  func tripModel(_ model: TripModel, didUpdateRemainingRoute points: [GoogleType.LatLng]) {
    record(model, .remainingRoute(points))
  }
  func tripModel(_ model: TripModel, didUpdateRemainingRouteDistance meters: Int32?) {
    record(model, .remainingRouteDistance(meters))
  }
  func tripModel(
    _ model: TripModel,
    didUpdateRemainingRouteTraffic intervals: [FleetEngine.SpeedReadingInterval]
  ) { record(model, .remainingRouteTraffic(intervals)) }
  func tripModel(_ model: TripModel, didRefreshAt date: Date) {
    record(model, .refreshed(date))
  }
  func tripModel(_ model: TripModel, didChangeState state: TripModelState) {
    record(model, .stateChanged(state))
  }
  func tripModel(_ model: TripModel, didFailUpdateTripWithError error: RPCError) {
    record(model, .updateFailed(error))
  }
}

struct WaitTimeout: Error, CustomStringConvertible {
  var what: String
  var events: [TripModelEvent]
  var description: String {
    "timed out waiting for \(what); events so far:\n"
      + events.map { "  \($0.summary)" }.joined(separator: "\n")
  }
}

extension TripModelEvent {
  /// A short form for failure messages and comparisons: `tripStatus(ENROUTE_TO_PICKUP)`.
  var summary: String {
    switch self {
    case .tripUpdated(_, let fields): "tripUpdated\(fields)"
    case .tripStatus(let status): "tripStatus(\(status))"
    case .activeRouteRemainingDistance(let meters):
      "remainingDistance(\(meters.map(String.init) ?? "nil"))"
    case .activeRoute(let points): "activeRoute(\(points.count) points)"
    case .vehicleLocation(let location):
      "vehicleLocation(\(location?.location.map { "\($0.latitude),\($0.longitude)" } ?? "nil"))"
    case .pickupLocation(let location):
      "pickupLocation(\(location?.point.map { "\($0.latitude),\($0.longitude)" } ?? "nil"))"
    case .dropoffLocation(let location):
      "dropoffLocation(\(location?.point.map { "\($0.latitude),\($0.longitude)" } ?? "nil"))"
    case .pickupETA(let date):
      "pickupETA(\(date.map { Int($0.timeIntervalSince1970) }.map(String.init) ?? "nil"))"
    case .dropoffETA(let date):
      "dropoffETA(\(date.map { Int($0.timeIntervalSince1970) }.map(String.init) ?? "nil"))"
    case .remainingWaypoints(let waypoints): "remainingWaypoints(\(waypoints.count))"
    case .intermediateDestinations(let list): "intermediateDestinations(\(list.count))"
    case .activeRouteTraffic(let traffic):
      "activeRouteTraffic(\(traffic?.speedReadingInterval.count ?? 0))"
    case .etaToNextWaypoint(let date):
      "etaToNextWaypoint(\(date.map { Int($0.timeIntervalSince1970) }.map(String.init) ?? "nil"))"
    case .tripName: "tripName"
    case .vehicleID(let id): "vehicleID(\(id))"
    case .tripType(let type): "tripType(\(type))"
    case .numberOfPassengers(let count): "numberOfPassengers(\(count))"
    case .intermediateDestinationIndex(let index):
      "intermediateDestinationIndex(\(index.map(String.init) ?? "nil"))"
    case .remainingRoute(let points): "remainingRoute(\(points.count) points)"
    case .remainingRouteDistance(let meters):
      "remainingRouteDistance(\(meters.map(String.init) ?? "nil"))"
    case .remainingRouteTraffic(let intervals): "remainingRouteTraffic(\(intervals.count))"
    case .refreshed: "refreshed"
    case .stateChanged(let state): "state(\(state))"
    case .updateFailed(let error): "failed(\(error.code.name))"
    }
  }

  var isTerminalStatus: Bool {
    if case .tripStatus(let status) = self { return status.isTerminal }
    return false
  }

  var error: RPCError? {
    if case .updateFailed(let error) = self { return error }
    return nil
  }
}
