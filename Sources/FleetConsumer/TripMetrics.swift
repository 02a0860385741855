internal import CoreMetrics
internal import GRPCWire

/// The trip layer's metrics (swift-metrics), made once per service:
/// `fleetconsumer.trips.followed` (a meter: models following now),
/// `fleetconsumer.trip.updates` (a counter: responses that updated a model) and
/// `fleetconsumer.trip.errors` (a counter per `category`: failed updates reported to
/// subscribers).
final class TripMetrics: Sendable {
  private let followed: Meter
  private let updates: Counter
  private let serverOrNetworkErrors: Counter
  private let clientErrors: Counter
  private let otherErrors: Counter

  init(factory: any MetricsFactory) {
    followed = Meter(label: "fleetconsumer.trips.followed", factory: factory)
    updates = Counter(label: "fleetconsumer.trip.updates", factory: factory)
    serverOrNetworkErrors = Counter(
      label: "fleetconsumer.trip.errors", dimensions: [("category", "serverOrNetwork")],
      factory: factory)
    clientErrors = Counter(
      label: "fleetconsumer.trip.errors", dimensions: [("category", "client")], factory: factory)
    otherErrors = Counter(
      label: "fleetconsumer.trip.errors", dimensions: [("category", "other")], factory: factory)
  }

  func startedFollowing() { followed.increment() }
  func stoppedFollowing() { followed.decrement() }
  func updated() { updates.increment() }

  func failed(_ category: RPCError.Category) {
    switch category {
    case .serverOrNetwork: serverOrNetworkErrors.increment()
    case .client: clientErrors.increment()
    case .other: otherErrors.increment()
    }
  }
}
