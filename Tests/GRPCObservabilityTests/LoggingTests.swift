import FleetConsumer
import FleetSimulator
import FleetSync
import GRPCWire
import Logging
import Testing

/// What the service, its channel and the simulator's server log at `trace`, captured from a
/// real follow: the events, with their metadata, and never the token.
@Suite("Logging", .timeLimit(.minutes(1)))
struct LoggingTests {
  /// Keeps every line, level, message and metadata rendered as text.
  struct Capture: LogHandler {
    let lines: PosixMutex<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { metadata[key] }
      set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
      let all = metadata.merging(event.metadata ?? [:]) { $1 }
      let rendered = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
      lines.withLock { $0.append("\(event.level) \(event.message) \(rendered.joined(separator: " "))") }
    }
  }

  static let secret = "SECRET-4711-do-not-log"

  @Test("A follow at trace level logs connections, updates and failures, and never the token")
  func neverTheToken() async throws {
    let lines = PosixMutex<[String]>([])
    let logger = Logger(label: "test") { _ in Capture(lines: lines) }
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
