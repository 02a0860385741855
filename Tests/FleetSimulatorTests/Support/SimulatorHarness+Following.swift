import GRPCWire
import Testing

@testable import FleetSimulator

extension SimulatorHarness {
  /// GetTrip of `name` every few milliseconds until it has ended: every answer, in order.
  /// Fails after `timeout`.
  func pollToEnd(_ name: String, timeout: Duration = .seconds(30)) async throws
    -> [FleetEngine.Trip]
  {
    var polls: [FleetEngine.Trip] = []
    let deadline = ContinuousClock.now + timeout
    while polls.last.map({ [.complete, .canceled].contains($0.tripStatus) }) != true {
      guard ContinuousClock.now < deadline else {
        throw TimedOut(description: "\(name) did not end within \(timeout)")
      }
      polls.append(try await getTrip(name))
      try await Task.sleep(for: .milliseconds(3))
    }
    return polls
  }

  /// Every update of a WatchTrip stream of `name`, to its end (the trip's); fails after
  /// `timeout`.
  func watchToEnd(_ name: String, timeout: Duration = .seconds(30)) async throws
    -> [FleetFeed.TripUpdate]
  {
    var request = FleetFeed.WatchTripRequest()
    request.name = name
    return try await channel.serverStreaming(
      FleetFeed.TripFeed.watchTrip, request, options: Self.call(timeout: timeout)
    ) { updates in
      var all: [FleetFeed.TripUpdate] = []
      for try await update in updates { all.append(update) }
      return all
    }
  }

  /// The first update of a WatchTrip stream of `name`, and the next one after `change` ran.
  func updates(of name: String, around change: () async throws -> Void) async throws
    -> (first: FleetFeed.TripUpdate, next: FleetFeed.TripUpdate)
  {
    var request = FleetFeed.WatchTripRequest()
    request.name = name
    return try await channel.serverStreaming(
      FleetFeed.TripFeed.watchTrip, request, options: Self.call()
    ) { updates in
      var iterator = updates.makeAsyncIterator()
      let first = try #require(try await iterator.next())
      try await change()
      return (first, try #require(try await iterator.next()))
    }
  }

  /// SearchTrips of the trips of vehicle `vehicleID` under the test provider, by name.
  func tripNames(ofVehicle vehicleID: String, activeOnly: Bool = false) async throws -> [String] {
    var request = FleetEngine.SearchTripsRequest()
    request.parent = "providers/\(Self.provider)"
    request.vehicleID = vehicleID
    request.activeTripsOnly = activeOnly
    return try await channel.unary(
      FleetEngine.TripService.searchTrips, request, options: Self.call()
    ).message.trips.map(\.name)
  }
}

/// `values` with runs of equal neighbours collapsed to one.
func changes<T: Equatable>(_ values: [T]) -> [T] {
  var result: [T] = []
  for value in values where result.last != value { result.append(value) }
  return result
}
