import Foundation
import PeerSupport
import Testing

/// `fleet-sim --metrics-port`: Prometheus' text format over HTTP, read with Python's HTTP
/// client after a `fleet-load` run.
@Suite("fleet-sim --metrics-port")
struct MetricsPortTests {
  @Test("after a fleet-load run, /metrics counts exactly its GetTrip calls in rpc_server_duration")
  func countsTheCalls() async throws {
    let sim = try await PeerServer.startFleetSim(["--trips", "10", "--metrics-port", "0"])
    _ = try await sim.waitForLine(timeout: .seconds(15), "a `metrics on` line") {
      $0.hasPrefix("metrics on ")
    }
    let url = try #require(
      sim.lines.first { $0.hasPrefix("metrics on ") }?
        .dropFirst("metrics on ".count))
    #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/metrics"))
    let load = try await FleetLoadProcess.run([
      "--target", sim.target, "--plaintext", "--trips-to-create", "10", "-c", "1", "-n", "300",
      "--warmup", "0", "--format", "json",
    ])
    #expect(load.status == 0, "\(load)")
    let report = try FleetLoadProcess.report(load)
    let made = try #require(report["count"] as? Int) + (report["warmupCount"] as? Int ?? -1)
      + (report["probeCount"] as? Int ?? -1)
    #expect(made >= 300)
    let got = try await PythonPeer.run("http_get.py", [String(url)], timeout: .seconds(30))
    #expect(got.status == 0, "\(got.stderr)")
    let lines = got.stdoutText.split(separator: "\n").map(String.init)
    #expect(lines.first == "200")
    #expect(lines.dropFirst().first?.hasPrefix("text/plain; version=0.0.4") == true)
    let series =
      #"rpc_server_duration_count{rpc_system="grpc",rpc_service="maps.fleetengine.v1.TripService",rpc_method="GetTrip",rpc_grpc_status_code="0"}"#
    let count = lines.first { $0.hasPrefix(series + " ") }.flatMap { Int($0.split(separator: " ").last ?? "") }
    #expect(count == made, "calls made: \(made); /metrics:\n\(got.stdoutText)")
    #expect(lines.contains { $0.hasPrefix("rpc_server_duration_bucket{") && $0.contains(#"rpc_method="GetTrip""#) })
    #expect(try await sim.terminate(timeout: .seconds(15)) == .exited(0), "fleet-sim did not end cleanly on SIGTERM with its metrics server")
  }
}
