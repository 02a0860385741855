import Foundation
import Testing

/// `--trips N`: trips followed through TripService/TripModel, by polling and by the feed.
@Suite("fleet-load --trips")
struct TripsTests {
  @Test(
    "--trips 5 follows five trips and reports updates, callback latency and memory",
    arguments: [false, true])
  func followsTrips(stream: Bool) async throws {
    // The simulator's trips stay NEW for their first 2 s, and a stream sends a trip that
    // stands still nothing after its first update: its measured phase runs past the end of NEW.
    let result = try await FleetLoadProcess.run(
      [
        "--trips", "5", "--poll-interval", "0.2", "-z", stream ? "3" : "1.5", "--warmup", "0.3",
        "--format", "json",
      ]
        + (stream ? ["--stream"] : []))
    #expect(result.status == 0, "\(result)")
    let report = try FleetLoadProcess.report(result)
    #expect(report["unit"] as? String == "update")
    #expect(report["connections"] as? Int == 1, "\(result)")
    #expect(report["call"] as? String == (stream ? "WatchTrip" : "GetTrip"))
    #expect((report["count"] as? Int ?? 0) > 0, "\(result)")
    #expect(report["errors"] as? [Any] != nil)
    let trips = try #require(report["trips"] as? [String: Any])
    #expect(trips["followed"] as? Int == 5)
    #expect(trips["tripsUpdated"] as? Int == 5, "\(result)")
    #expect(trips["mode"] as? String == (stream ? "stream" : "poll"))
    #expect(trips["errors"] as? Int == 0, "\(result)")
    #expect((trips["updatesPerSecond"] as? Double ?? 0) > 0)
    #expect((trips["peakRSSBytesPerTrip"] as? Double ?? 0) > 0)
    let latency = try #require(trips["callbackLatencyMicroseconds"] as? [String: Double])
    #expect((latency["p50"] ?? 0) > 0)
  }

  @Test("with --trips, --connections may be more than -c: it caps TripService's connections")
  func connectionsAboveConcurrency() async throws {
    let result = try await FleetLoadProcess.run([
      "--trips", "2", "-c", "1", "--connections", "3", "-z", "0.5", "--warmup", "0.1",
      "--format", "json",
    ])
    #expect(result.status == 0, "\(result)")
    let trips = try #require(try FleetLoadProcess.report(result)["trips"] as? [String: Any])
    #expect(trips["followed"] as? Int == 2 && trips["errors"] as? Int == 0, "\(result)")
  }
}
