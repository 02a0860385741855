import Foundation
import PeerSupport
import Testing

/// fleet-share's demo page in a real browser: Debian's headless chromium, driven by selenium
/// (`Tests/Python/share_browser.py`) through chromium-driver, watching a demo trip to its end.
@Suite("Share page in headless Chromium", .timeLimit(.minutes(4)))
struct SharePageBrowserTests {
  @Test("the page fetches nothing from elsewhere, draws route and markers, follows the vehicle to COMPLETE")
  func watchesTheTrip() async throws {
    try await withTool("fleet-share", ["--port", "0"]) { share in
      let first = try await share.waitForLine(timeout: .seconds(30), "its first line") { _ in true }
      #expect(first.hasPrefix("listening on http://127.0.0.1:"), "\(first)")
      let origin = String(first.dropFirst("listening on ".count))
      let line = try await share.waitForLine(timeout: .seconds(30), "a share link") {
        $0.hasPrefix("share link: ")
      }
      let link = String(line.dropFirst("share link: ".count))
      #expect(link.hasPrefix(origin + "/s/"))
      let screenshot = FileManager.default.temporaryDirectory
        .appendingPathComponent("share-page-\(UUID().uuidString).png")
      defer { try? FileManager.default.removeItem(at: screenshot) }
      let output = try await PythonPeer.run(
        "share_browser.py", [link, screenshot.path, "--seconds", "120"], timeout: .seconds(180))
      #expect(output.status == 0, "\(output.stderr)")
      let report = try #require(
        try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any],
        "no report: \(output.stdoutText) \(output.stderr)")
      #expect(report["error"] == nil, "\(report["error"] ?? "")")

      let requests = report["requests"] as? [String] ?? []
      #expect(!requests.isEmpty)
      #expect(requests.allSatisfy { $0.hasPrefix(origin + "/") }, "requests elsewhere: \(requests)")
      #expect(!requests.contains { $0.hasSuffix("/favicon.ico") }, "the favicon was fetched")
      let statuses = report["statuses"] as? [String] ?? []
      #expect(statuses.last == "COMPLETE", "\(statuses)")
      #expect(statuses.count >= 3, "\(statuses)")
      #expect((report["vehiclePositions"] as? [String] ?? []).count >= 2, "the vehicle never moved")
      #expect((report["etas"] as? [String] ?? []).count >= 2, "the ETA never changed: \(report["etas"] ?? "")")
      #expect(report["routeSegments"] as? Int ?? 0 > 0)
      let markers = report["markers"] as? [String: Int] ?? [:]
      #expect(markers["pickup"] == 1 && markers["dropoff"] == 1, "\(markers)")

      let shot = try #require(report["screenshot"] as? [String: Int], "no screenshot taken")
      let bytes = try Data(contentsOf: screenshot)
      #expect(bytes.count == shot["bytes"] && bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]))
      #expect(shot["distinctBytes"] ?? 0 >= 32, "the screenshot looks blank: \(shot)")
    }
  }
}
