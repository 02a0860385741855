import FleetConsumer
import FleetSimulator
import FleetSync
import GRPCWire
import Logging
import PeerSupport
import Testing

/// What the service, its channel and the simulator's server log at `trace`, captured from a
/// real follow: the events, with their metadata, and never the token.
@Suite("Logging", .timeLimit(.minutes(1)))
struct LoggingTests {
  static let secret = "SECRET-4711-do-not-log"

  @Test("A follow at trace level logs connections, updates and failures, and never the token")
  func neverTheToken() async throws {
    let lines = PosixMutex<[String]>([])
    let logger = Logger(label: "test") { _ in CapturedLog(lines: lines) }
    var simulatorOptions = SimulatorOptions()
    simulatorOptions.logger = logger
    let simulator = try await FleetSimulator.start(options: simulatorOptions)
    let name = try simulator.createDemoTrip()
    let service = try TripService(
      configuration: .init(
        endpoint: try .init(simulator.endpoint), transportSecurity: .plaintext,
        providerID: "demo-provider",
        accessTokenProvider: FixedAccessTokenProvider(AccessToken(Self.secret)),
        logger: logger))
    // One trip that updates, one that does not exist (NOT_FOUND: a failed update).
    for trip in [name, "providers/demo-provider/trips/no-such-trip"] {
      let model = try service.tripModel(forTripName: trip)
      for await event in model.updates(includingRefreshes: true) {
        if case .refreshed = event { break }
        if case .updateFailed = event { break }
      }
    }
    service.shutdown()
    await simulator.shutdown(gracePeriod: .seconds(1))
    let logged = lines.withLock { $0 }
    for expected in [
      "listening", "connection accepted", "connection ready", "following", "access token fetched",
      "trip update failed",
    ] {
      #expect(logged.contains { $0.contains(" \(expected) ") }, "no '\(expected)' in:\n\(logged.joined(separator: "\n"))")
    }
    #expect(
      logged.contains { $0.contains("trip update failed") && $0.contains("grpc.status=NOT_FOUND") && $0.contains("fleet.category=") })
    #expect(!logged.contains { $0.contains(Self.secret) }, "the token was logged")
  }
}
