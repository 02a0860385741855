import Foundation
import PeerSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Pacing, metadata and connections, observed from outside the load tool.
@Suite("fleet-load load shape")
struct LoadShapeTests {
  @Test("--rps 200 -z 1 sends about 200 calls (±10%), paced by a fixed clock")
  func pacing() async throws {
    let result = try await FleetLoadProcess.run([
      "--rps", "200", "-z", "1", "-c", "10", "--warmup", "0", "--format", "json",
    ])
    let report = try FleetLoadProcess.report(result)
    let count = try #require(report["count"] as? Int)
    #expect((180...220).contains(count), "\(result)")
    #expect(report["rps"] as? Double == 200)
  }

  @Test("-m metadata reaches the server: the strict simulator accepts only the token given")
  func metadataReachesTheServer() async throws {
    let sim = try await PeerServer.startFleetSim(["--trips", "2", "--strict-tokens"])
    let common = [
      "--target", sim.target, "--plaintext", "--trips-to-create", "2", "-n", "20", "-c", "2",
      "--warmup", "0", "--format", "json",
    ]
    let given = try await FleetLoadProcess.run(common + ["-m", "authorization=Bearer sim:*"])
    let defaulted = try await FleetLoadProcess.run(common)
    try await sim.terminate(timeout: .seconds(15))
    #expect(try FleetLoadProcess.report(given)["statusCodes"] as? [String: Int] == ["OK": 20])
    // The default token, `load-test`, is no trip's token.
    let codes = try FleetLoadProcess.report(defaulted)["statusCodes"] as? [String: Int]
    #expect(codes?["OK"] == nil && codes?.values.reduce(0, +) == 20, "\(defaulted)")
  }

  @Test(
    "--connections 3 opens exactly three connections to the server (its sockets, less those it had idle)"
  )
  func connections() async throws {
    let sim = try await PeerServer.startFleetSim()
    // The listener, and whatever the process inherited from the test runner.
    let idle = sim.process.socketCount
    let load = try ToolProcess.start(
      "fleet-load",
      [
        "--target", sim.target, "--plaintext", "--call",
        "grpc.testing.BenchmarkService/UnaryCall", "-c", "6", "--connections", "3", "-z", "3",
        "--warmup", "0", "--format", "json",
      ])
    var most = 0
    while load.isRunning {
      most = max(most, sim.process.socketCount - idle)
      try await Task.sleep(for: .milliseconds(20))
    }
    let status = try await load.waitForExit()  // and the last of its stdout
    try await sim.terminate(timeout: .seconds(15))
    #expect(status == .exited(0), "\(load.stderr)")
    #expect(most == 3)
    let report = try JSONSerialization.jsonObject(with: Data(load.stdout)) as? [String: Any]
    #expect(report?["connections"] as? Int == 3)
  }
}
