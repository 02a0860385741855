public import FleetConsumer
internal import FleetSync
public import FoundationEssentials

/// One follow per trip, however many viewers: the first viewer of a trip makes its
/// ``TripModel`` follow, every later one shares it, and when the last one leaves the model
/// stops. A viewer joining late gets the trip as last received at once.
///
/// What viewers get is what a model's subscriber gets, so the service's privacy option holds:
/// with `hidesOtherTrips` (the default) other riders' waypoints of a shared vehicle are never
/// in it.
public final class TripFanOut: Sendable {
  /// What a viewer is told.
  public enum Event: Sendable {
    /// The trip as it is now (merged: every field known so far).
    case trip(FleetEngine.Trip)
    /// An update failed; the model retries by itself.
    case failed(RPCError)
  }

  private let service: TripService
  private let watched = PosixMutex<[String: Watched]>([:])
  private let nextViewer = PosixMutex<UInt64>(0)

  /// One followed trip: its model, the subscriber that relays to the viewers, the viewers,
  /// and the last trip received.
  private final class Watched: Sendable {
    let model: TripModel
    let relay: Relay

    init(model: TripModel, relay: Relay) {
      self.model = model
      self.relay = relay
    }
  }

  public init(service: TripService) {
    self.service = service
  }

  /// Trips followed now (those with at least one viewer).
  public var followedTrips: Int { watched.withLock { $0.count } }

  /// Viewers of `tripName` now.
  public func viewers(of tripName: String) -> Int {
    watched.withLock { $0[tripName]?.relay.viewerCount ?? 0 }
  }

  /// When the vehicle location of `tripName`'s last update arrived here, by this server's
  /// clock: what stands in for a location's own `update_time` when it has none. Nil when
  /// nobody views the trip or no location came yet.
  public func locationReceivedAt(_ tripName: String) -> Date? {
    watched.withLock { $0[tripName] }?.relay.locationReceivedAt
  }

  /// Views `tripName`: the trip as last received (if any) at once, then each change, until
  /// the stream is dropped or its consumer's task ends. Throws for a name the service cannot
  /// follow (INVALID_ARGUMENT, another provider's trip).
  public func view(_ tripName: String) throws(RPCError) -> AsyncStream<Event> {
    let id = nextViewer.withLock { value -> UInt64 in
      value += 1
      return value
    }
    let (stream, continuation) = AsyncStream.makeStream(
      of: Event.self, bufferingPolicy: .bufferingNewest(16))
    let model = try service.tripModel(forTripName: tripName)
    watched.withLock { watched in
      if let existing = watched[tripName] {
        existing.relay.add(id, continuation)
        return
      }
      let relay = Relay()
      relay.add(id, continuation)
      watched[tripName] = Watched(model: model, relay: relay)
      // Inside the lock, so that a viewer leaving at once cannot unregister it first: the
      // model's callbacks come later, on the service's callback executor, and never take
      // this lock.
      model.register(relay)
    }
    continuation.onTermination = { [weak self] _ in self?.leave(tripName, id) }
    return stream
  }

  private func leave(_ tripName: String, _ id: UInt64) {
    let stopping = watched.withLock { watched -> Watched? in
      guard let entry = watched[tripName] else { return nil }
      entry.relay.remove(id)
      guard entry.relay.viewerCount == 0 else { return nil }
      watched[tripName] = nil
      return entry
    }
    stopping.map { $0.model.unregisterSubscriber($0.relay) }
  }
}

/// A model's subscriber that hands each trip and failure to every viewer, and keeps the last
/// trip for viewers who come later.
final class Relay: TripModelSubscriber {
  private struct State {
    var viewers: [UInt64: AsyncStream<TripFanOut.Event>.Continuation] = [:]
    var latest: FleetEngine.Trip?
    var locationReceivedAt: Date?
  }

  private let state = PosixMutex(State())

  var viewerCount: Int { state.withLock { $0.viewers.count } }

  var locationReceivedAt: Date? { state.withLock { $0.locationReceivedAt } }

  func add(_ id: UInt64, _ continuation: AsyncStream<TripFanOut.Event>.Continuation) {
    let latest = state.withLock { state -> FleetEngine.Trip? in
      state.viewers[id] = continuation
      return state.latest
    }
    if let latest { continuation.yield(.trip(latest)) }
  }

  func remove(_ id: UInt64) {
    _ = state.withLock { $0.viewers.removeValue(forKey: id) }
  }

  func tripModel(
    _ model: TripModel, didUpdate trip: FleetEngine.Trip,
    updatedPropertyFields: TripModelUpdatedPropertyFields
  ) {
    let now = Date()
    broadcast(.trip(trip)) { state in
      state.latest = trip
      if updatedPropertyFields.contains(.vehicleLocation) { state.locationReceivedAt = now }
    }
  }

  func tripModel(_ model: TripModel, didFailUpdateTripWithError error: RPCError) {
    broadcast(.failed(error)) { _ in }
  }

  private func broadcast(_ event: TripFanOut.Event, _ record: (inout State) -> Void) {
    let viewers = state.withLock { state in
      record(&state)
      return Array(state.viewers.values)
    }
    for viewer in viewers { viewer.yield(event) }
  }
}
