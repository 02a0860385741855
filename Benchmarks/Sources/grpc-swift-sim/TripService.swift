import BenchmarkProtos
import FleetProtos
import FleetSimulator
import GRPCCore
import SwiftProtobuf

/// TripService/GetTrip over a fixed set of trips, made by FleetSimulator and converted once
/// (through their protobuf encoding) to SwiftProtobuf messages. The other methods are
/// UNIMPLEMENTED: the benchmarks only call GetTrip.
///
/// It implements the generated `ServiceProtocol` (requests with their metadata) rather than
/// `SimpleServiceProtocol`, whose context does not carry the request's metadata, so it can
/// check the bearer token as fleet-sim does.
struct TripService: Maps_Fleetengine_V1_TripService.ServiceProtocol {
  /// The trip names, in creation order.
  let names: [String]
  private let trips: [String: Maps_Fleetengine_V1_Trip]

  /// Creates `trips` trips on an embedded simulator, renders each as GetTrip would now (or at
  /// `frozenAt` simulated time since creation, as fleet-sim's `--freeze-at`), and keeps the
  /// SwiftProtobuf form.
  static func make(trips count: Int, providerID: String, frozenAt: Duration? = nil) async throws
    -> TripService
  {
    var options = SimulatorOptions()
    options.frozenAt = frozenAt
    let simulator = try await FleetSimulator.start(host: "127.0.0.1", port: 0, options: options)
    let names = count > 0 ? try simulator.createTrips(count: count, providerID: providerID) : []
    var trips: [String: Maps_Fleetengine_V1_Trip] = [:]
    for name in names {
      guard let trip = simulator.trip(named: name) else { continue }
      trips[name] = try Maps_Fleetengine_V1_Trip(serializedBytes: trip.serializedBytes())
    }
    await simulator.shutdown(gracePeriod: .zero)
    return TripService(names: names, trips: trips)
  }

  func getTrip(
    request: ServerRequest<Maps_Fleetengine_V1_GetTripRequest>, context: ServerContext
  ) async throws -> ServerResponse<Maps_Fleetengine_V1_Trip> {
    // As fleet-sim's default token policy: any bearer token.
    let bearer = request.metadata[stringValues: "authorization"].contains {
      $0.hasPrefix("Bearer ") && $0.count > 7
    }
    guard bearer else {
      throw RPCError(code: .unauthenticated, message: "a bearer token is required")
    }
    guard let trip = trips[request.message.name] else {
      throw RPCError(code: .notFound, message: "no trip \(request.message.name)")
    }
    return ServerResponse(message: trip)
  }

  func createTrip(
    request: ServerRequest<Maps_Fleetengine_V1_CreateTripRequest>, context: ServerContext
  ) async throws -> ServerResponse<Maps_Fleetengine_V1_Trip> { throw Self.unimplemented }

  func deleteTrip(
    request: ServerRequest<Maps_Fleetengine_V1_DeleteTripRequest>, context: ServerContext
  ) async throws -> ServerResponse<Google_Protobuf_Empty> { throw Self.unimplemented }

  func reportBillableTrip(
    request: ServerRequest<Maps_Fleetengine_V1_ReportBillableTripRequest>, context: ServerContext
  ) async throws -> ServerResponse<Google_Protobuf_Empty> { throw Self.unimplemented }

  func searchTrips(
    request: ServerRequest<Maps_Fleetengine_V1_SearchTripsRequest>, context: ServerContext
  ) async throws -> ServerResponse<Maps_Fleetengine_V1_SearchTripsResponse> {
    throw Self.unimplemented
  }

  func updateTrip(
    request: ServerRequest<Maps_Fleetengine_V1_UpdateTripRequest>, context: ServerContext
  ) async throws -> ServerResponse<Maps_Fleetengine_V1_Trip> { throw Self.unimplemented }

  private static var unimplemented: RPCError {
    RPCError(code: .unimplemented, message: "grpc-swift-sim serves GetTrip only")
  }
}
