import Foundation
import PeerSupport
import Testing

/// Every `--call` workload against a real `fleet-sim` process.
@Suite("fleet-load workloads")
struct WorkloadTests {
  @Test(
    "each workload against fleet-sim: units counted, all OK, the right unit",
    arguments: [
      ("GetTrip", "rpc"), ("WatchTrip", "message"),
      ("grpc.testing.BenchmarkService/UnaryCall", "rpc"),
      ("grpc.testing.BenchmarkService/StreamingCall", "rpc"),
      ("grpc.testing.BenchmarkService/StreamingFromServer", "message"),
      ("grpc.testing.TestService/StreamingOutputCall", "message"),
    ])
  func workload(call: String, unit: String) async throws {
    let sim = try await PeerServer.startFleetSim(["--trips", "4"])
    let sizes =
      call.hasPrefix("grpc.testing.") ? ["--response-size", "64", "--request-size", "16"] : []
    let result = try await FleetLoadProcess.run(
      [
        "--target", sim.target, "--plaintext", "--trips-to-create", "4", "--call", call,
        "-c", "2", "-z", "0.5", "--warmup", "0.1", "--stream-messages", "5", "--format", "json",
      ] + sizes)
    try await sim.terminate(timeout: .seconds(15))
    #expect(result.status == 0, "\(result)")
    let report = try FleetLoadProcess.report(result)
    #expect(report["call"] as? String == call)
    #expect(report["unit"] as? String == unit)
    let count = try #require(report["count"] as? Int)
    #expect(count > 0, "\(result)")
    let codes = try #require(report["statusCodes"] as? [String: Int])
    #expect(Set(codes.keys) == ["OK"], "\(result)")
    if unit == "rpc" { #expect(codes["OK"] == count) }
    #expect((report["errors"] as? [Any])?.isEmpty == true)
    let cpu = try #require(report["cpu"] as? [String: Any])
    #expect(cpu["scope"] as? String == "client")
    #expect((cpu["microsecondsPerUnit"] as? Double ?? 0) > 0)
    #expect(report["connections"] as? Int == 1)
    #expect(report["partial"] as? Bool == false)
    #expect(report["warmupCount"] is Int)
  }

  @Test("--stream-messages K: StreamingOutputCall streams end OK with K messages each")
  func streamingOutputCallCounts() async throws {
    let sim = try await PeerServer.startFleetSim()
    let result = try await FleetLoadProcess.run([
      "--target", sim.target, "--plaintext", "--call",
      "grpc.testing.TestService/StreamingOutputCall", "--stream-messages", "7", "-c", "1",
      "-n", "70", "--warmup", "0", "--format", "json",
    ])
    try await sim.terminate(timeout: .seconds(15))
    let report = try FleetLoadProcess.report(result)
    #expect(report["count"] as? Int == 70, "\(result)")
    // 10 streams of 7; the tenth may be cut when the 70th message arrives.
    let codes = try #require(report["statusCodes"] as? [String: Int])
    #expect(codes["OK"] == 10, "\(result)")
  }
}
