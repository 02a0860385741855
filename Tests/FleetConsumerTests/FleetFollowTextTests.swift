import Foundation
import PeerSupport
import Testing

/// fleet-follow for people: `--help`, and the readable view it prints without `--json`.
@Suite("fleet-follow without --json", .fakeFleetEngine)
struct FleetFollowTextTests {
  @Test("--help exits 0 and says what happens without --endpoint (the demo)")
  func help() async throws {
    let result = try await FleetFollowProcess.run(["--help"])
    #expect(result.status == 0)
    #expect(result.stdout.contains("Without --endpoint it runs the demo"))
    #expect(result.stdout.contains("--stream"))
    #expect(result.stdout.contains("--token-command"))
    #expect(result.stdout.contains("--keepalive-interval"))
    #expect(result.stdout.contains("--keepalive-timeout"))
  }

  @Test("without --json it prints a readable view and still exits 0 after COMPLETE")
  func readableView() async throws {
    let engine = try SharedFakeEngine.engine()
    let name = FakeScript.tripName()
    try engine.add([name: Lifecycle.steps(tripName: name)])
    let result = try await FleetFollowProcess.run([
      "--endpoint", "127.0.0.1:\(engine.server.port)", "--plaintext", "--trip-name", name,
      "--token", "x", "--poll-interval", "0.1",
    ])
    #expect(result.status == 0, "\(result)")
    #expect(result.lines.count == 6)
    #expect(result.stdout.contains("status ENROUTE_TO_PICKUP"))
    #expect(result.stdout.contains("vehicle at 52.490000,13.380000"))
    #expect(!result.stdout.contains("{"))
  }
}
