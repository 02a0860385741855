import FleetConsumer
import Foundation
import PeerSupport
import Testing

/// fleet-share's fan-out, measured against the Python fake Fleet Engine: N viewers of one
/// trip's Server-Sent Events cost the GetTrips of one follow, one per poll interval.
@Suite("fleet-share fan-out against the fake Fleet Engine", .timeLimit(.minutes(3)))
struct ShareFanOutTests {
  @Test("N SSE viewers on one trip: one GetTrip per poll interval", arguments: [1, 200])
  func oneGetTripPerInterval(viewers: Int) async throws {
    let engine = try await FakeFleetEngine.start(quiet: false)
    let name = FakeScript.tripName("fanout-\(viewers)")
    try engine.add([name: Lifecycle.steps(tripName: name, ending: "COMPLETE").prefix(2).map { $0 }])
    let arguments = [
      "--endpoint", "127.0.0.1:\(engine.server.port)", "--plaintext", "--provider", FleetTest.provider,
      "--token", "t", "--port", "0", "--admin-token", "admin", "--poll-interval", "1",
    ]
    try await withTool("fleet-share", arguments) { share in
      let first = try await share.waitForLine(timeout: .seconds(30), "its first line") { _ in true }
      let base = String(first.dropFirst("listening on ".count))
      let made = try await PythonPeer.run(
        "http_request.py",
        [
          "POST", base + "/links", "--header", "Authorization: Bearer admin", "--data",
          #"{"tripName": "\#(name)"}"#,
        ])
      let response = try #require(
        try JSONSerialization.jsonObject(with: Data(made.stdout)) as? [String: Any], "\(made.stderr)")
      #expect(response["status"] as? Int == 201, "\(response)")
      let body = try #require(
        try JSONSerialization.jsonObject(with: Data((response["body"] as? String ?? "").utf8))
          as? [String: Any])
      let link = try #require(body["url"] as? String)

      let watched = try await PythonPeer.run(
        "sse_viewers.py", [link + "/events", "\(viewers)", "4"], timeout: .seconds(120))
      let report = try #require(
        try JSONSerialization.jsonObject(with: Data(watched.stdout)) as? [String: Any],
        "\(watched.stderr)")
      #expect(report["error"] == nil, "\(report)")
      #expect(report["connected"] as? Int == viewers, "\(report)")
      let seconds = try #require(report["watchedSeconds"] as? Double)
      let watching = engine.requests(for: name).count
      // The viewers are gone; fleet-share stops following once it has noticed their streams
      // close. A viewer that closed its socket is noticed by a write to its stream (the
      // trip's next change, or the keep-alive comment every 15 s), and the first write after
      // the close may still succeed (the peer answers it with a reset), so up to 30 s: the
      // polls meanwhile are the follow of a trip that still has viewers, as far as it can tell.
      let port = try #require(Int(base.split(separator: ":").last ?? ""))
      let left = ContinuousClock.now
      while try await ShareCluster.followedTrips(port: port) != 0 {
        guard ContinuousClock.now - left < .seconds(35) else {
          Issue.record("still followed 35 s after the viewers left")
          break
        }
        try await Task.sleep(for: .milliseconds(100))
      }
      let unfollowed = ContinuousClock.now - left
      let atLeaving = engine.requests(for: name).count
      // A follow that outlived its viewers would poll again within 1.5 s (interval 1 s): the
      // absence of those polls is what this waits for (one already under way may land).
      try await Task.sleep(for: .seconds(1.5))
      let polls = engine.requests(for: name).count
      #expect(polls - atLeaving <= 1, "the follow went on once the trip was unfollowed: \(atLeaving) → \(polls)")
      // One follow polling every second while anyone watched (plus the first poll at once).
      let most = Int(seconds.rounded(.up)) + 2
      #expect(
        watching >= 2 && watching <= most, "\(watching) GetTrips while \(viewers) viewers watched for \(seconds) s")
      print(
        "[fan-out] \(viewers) viewers, \(String(format: "%.1f", seconds)) s: \(watching) GetTrips; "
          + "unfollowed \(unfollowed) after they left")
    }
    await engine.stop()
  }
}
