import Foundation
import Testing

/// The README's main command: `fleet-follow` with no endpoint follows a demo trip on the
/// simulator it starts in its own process, to COMPLETE, within about a minute.
@Suite("fleet-follow demo on the embedded simulator", .timeLimit(.minutes(3)))
struct DemoTests {
  static let lifecycle = [
    "NEW", "ENROUTE_TO_PICKUP", "ARRIVED_AT_PICKUP", "ENROUTE_TO_DROPOFF", "COMPLETE",
  ]

  func statuses(_ result: FleetFollowProcess.Result) throws -> [String] {
    try result.objects().filter { $0["event"] as? String == "tripStatus" }
      .compactMap { $0["status"] as? String }
  }

  @Test("with no endpoint, polling: every status in order, COMPLETE last, exit 0, under a minute")
  func polling() async throws {
    let start = ContinuousClock.now
    let result = try await FleetFollowProcess.run(["--json"], timeout: .seconds(90))
    #expect(result.status == 0, "\(result)")
    #expect(try statuses(result) == Self.lifecycle, "\(result)")
    #expect(ContinuousClock.now - start < .seconds(60))
    #expect(result.stderr.contains("simulator listens on 127.0.0.1:"), "\(result.stderr)")
  }

  @Test("with no endpoint, --stream: the same statuses through the streaming trip feed")
  func streaming() async throws {
    let result = try await FleetFollowProcess.run(["--json", "--stream"], timeout: .seconds(90))
    #expect(result.status == 0, "\(result)")
    #expect(try statuses(result) == Self.lifecycle, "\(result)")
    #expect(!result.stdout.contains("\"error\""), "\(result.stdout)")
  }

  @Test("the demo refuses trip and token flags without an endpoint, with exit status 2")
  func demoFlags() async throws {
    let result = try await FleetFollowProcess.run(["--trip-name", "providers/p/trips/t"])
    #expect(result.status == 2, "\(result)")
    #expect(result.stderr.contains("--endpoint"), "\(result.stderr)")
  }
}
