import Foundation
import GRPCWire
import Testing

@testable import FleetSimulator

/// A simulator on 127.0.0.1 with a port the OS picked, and a GRPCWire channel to it, for one
/// test.
struct SimulatorHarness {
  static let provider = "sim-test"

  let simulator: FleetSimulator
  let channel: GRPCChannel

  /// Runs `body` with a simulator started with `options`, then shuts both down.
  static func with<T>(
    _ options: SimulatorOptions = SimulatorOptions(),
    channelOptions: ChannelOptions = ChannelOptions(),
    _ body: (SimulatorHarness) async throws -> T
  ) async throws -> T {
    let simulator = try await FleetSimulator.start(options: options)
    let channel = GRPCChannel(host: "127.0.0.1", port: simulator.port, options: channelOptions)
    let harness = SimulatorHarness(simulator: simulator, channel: channel)
    do {
      let result = try await body(harness)
      channel.close()
      await simulator.shutdown(gracePeriod: .zero)
      return result
    } catch {
      channel.close()
      await simulator.shutdown(gracePeriod: .zero)
      throw error
    }
  }

  /// Call options carrying `authorization: Bearer <token>` (none when `token` is nil).
  static func call(token: String? = "test-token", timeout: Duration = .seconds(10))
    -> CallOptions
  {
    var metadata = Metadata()
    // An empty token is sent as a bare "Bearer": gRPC metadata values may not end in a space.
    if let token { metadata.add("authorization", token.isEmpty ? "Bearer" : "Bearer \(token)") }
    return CallOptions(timeout: timeout, metadata: metadata)
  }

  /// A trip ID no other test uses.
  static func uniqueTripID(_ prefix: String = "t") -> String {
    "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
  }

  /// CreateTrip of `tripID` with `trip` (generated stops when it has none).
  func createTrip(
    _ tripID: String = uniqueTripID(), _ trip: FleetEngine.Trip = FleetEngine.Trip(),
    token: String? = "test-token", provider: String = provider
  ) async throws -> FleetEngine.Trip {
    var request = FleetEngine.CreateTripRequest()
    request.parent = "providers/\(provider)"
    request.tripID = tripID
    request.trip = trip
    return try await channel.unary(
      FleetEngine.TripService.createTrip, request, options: Self.call(token: token)
    ).message
  }

  /// GetTrip of `name`, with `configure` adjusting the request.
  func getTrip(
    _ name: String, token: String? = "test-token",
    _ configure: (inout FleetEngine.GetTripRequest) -> Void = { _ in }
  ) async throws -> FleetEngine.Trip {
    var request = FleetEngine.GetTripRequest()
    request.name = name
    request.view = .journeySharingV1s
    configure(&request)
    return try await channel.unary(
      FleetEngine.TripService.getTrip, request, options: Self.call(token: token)
    ).message
  }

  /// UpdateTrip of `name` to CANCELED, through the `trip_status` mask.
  @discardableResult
  func cancelTrip(_ name: String) async throws -> FleetEngine.Trip {
    var trip = FleetEngine.Trip()
    trip.tripStatus = .canceled
    return try await updateTrip(name, paths: ["trip_status"], trip)
  }

  /// UpdateTrip of `name` with the fields of `trip` that `paths` name.
  @discardableResult
  func updateTrip(_ name: String, paths: [String], _ trip: FleetEngine.Trip) async throws
    -> FleetEngine.Trip
  {
    var request = FleetEngine.UpdateTripRequest()
    request.name = name
    request.trip = trip
    var mask = GoogleProtobuf.FieldMask()
    mask.paths = paths
    request.updateMask = mask
    return try await channel.unary(
      FleetEngine.TripService.updateTrip, request, options: Self.call()
    ).message
  }
}

/// A location for a CreateTrip request.
func terminal(_ latitude: Double, _ longitude: Double) -> FleetEngine.TerminalLocation {
  var point = GoogleType.LatLng()
  point.latitude = latitude
  point.longitude = longitude
  var location = FleetEngine.TerminalLocation()
  location.point = point
  return location
}

/// Options for watching a whole trip in about a second: 600× real time, short waits, a
/// vehicle starting 600–800 m from the pickup.
func fastOptions(timeScale: Double = 600) -> SimulatorOptions {
  var options = SimulatorOptions()
  options.timeScale = timeScale
  options.newDuration = .seconds(60)
  options.pickupWait = .seconds(60)
  options.intermediateWait = .seconds(60)
  options.vehicleStartDistance = 600...800
  options.feedInterval = .milliseconds(50)
  return options
}

/// The trip of `fastOptions`: pickup and drop-off about 1.1 km apart, one intermediate
/// destination between them.
func fastTrip(intermediate: Bool = true) -> FleetEngine.Trip {
  var trip = FleetEngine.Trip()
  trip.pickupPoint = terminal(52.5200, 13.4050)
  if intermediate { trip.intermediateDestinations = [terminal(52.5240, 13.4100)] }
  trip.dropoffPoint = terminal(52.5270, 13.4150)
  trip.numberOfPassengers = 2
  return trip
}

/// A trip with three intermediate destinations between pickup and drop-off, about 400 m
/// apart.
func threeStopTrip() -> FleetEngine.Trip {
  var trip = FleetEngine.Trip()
  trip.pickupPoint = terminal(52.5200, 13.4050)
  trip.intermediateDestinations = [
    terminal(52.5230, 13.4080), terminal(52.5250, 13.4120), terminal(52.5230, 13.4160),
  ]
  trip.dropoffPoint = terminal(52.5260, 13.4200)
  trip.numberOfPassengers = 1
  return trip
}

/// Every status of a trip with one intermediate destination, in order.
let fullLifecycle: [FleetEngine.TripStatus] = [
  .new, .enrouteToPickup, .arrivedAtPickup, .enrouteToIntermediateDestination,
  .arrivedAtIntermediateDestination, .enrouteToDropoff, .complete,
]

/// Calls `body` until it returns non-nil, or fails the test after `timeout`.
func eventually<T>(
  _ what: String, timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(20),
  _ body: () async throws -> T?
) async throws -> T {
  let deadline = ContinuousClock.now + timeout
  while true {
    if let value = try await body() { return value }
    guard ContinuousClock.now < deadline else {
      throw TimedOut(description: "timed out after \(timeout) waiting for \(what)")
    }
    try await Task.sleep(for: interval)
  }
}

/// The `ErrorInfo` of `error`, which must be an RPCError.
func errorInfo(_ error: any Error) -> GoogleRPC.ErrorInfo? {
  (error as? RPCError)?.errorInfo
}

/// A wait of ``eventually(_:timeout:every:_:)`` ran out.
struct TimedOut: Error, CustomStringConvertible {
  var description: String
}
