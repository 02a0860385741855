import Foundation
import Testing

/// `fleet-load` as a black box: the built executable against its embedded simulator.
@Suite("fleet-load")
struct FleetLoadTests {
  @Test("-n 500 -c 10 --format json on the embedded simulator: one JSON report, 500 OK calls")
  func jsonReportOfACountedRun() async throws {
    let result = try await FleetLoadProcess.run([
      "-n", "500", "-c", "10", "--format", "json", "--warmup", "0.2",
    ])
    #expect(result.status == 0, "\(result)")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
      "\(result)")
    #expect(object["count"] as? Int == 500)
    #expect(object["statusCodes"] as? [String: Int] == ["OK": 500])
    #expect((object["errors"] as? [Any])?.isEmpty == true)
    #expect(object["call"] as? String == "GetTrip")
    let latency = try #require(object["latencyMicroseconds"] as? [String: Double])
    let p50 = try #require(latency["p50"])
    let p99 = try #require(latency["p99"])
    let fastest = try #require(latency["fastest"])
    let slowest = try #require(latency["slowest"])
    #expect(fastest > 0 && fastest <= p50 && p50 <= p99 && p99 <= slowest)
    #expect((object["rate"] as? Double ?? 0) > 0)
    let cpu = try #require(object["cpu"] as? [String: Any])
    #expect(cpu["scope"] as? String == "process")
    #expect((object["peakRSSBytes"] as? Int ?? 0) > 0)
    #expect((object["command"] as? String)?.hasPrefix("fleet-load -n 500") == true)
    #expect(object["executor"] as? String == "loop")
  }

  @Test("responseBytesPerCall: a 1,100-byte UnaryCall payload arrives as 1,111 bytes per call")
  func responseBytesPerCall() async throws {
    // SimpleResponse { payload: Payload { body: 1,100 bytes } }: 1 + 2 + (1 + 2 + 1,100) =
    // 1,106 bytes of message, and gRPC's 5-byte prefix: what h2load counts as DATA.
    let result = try await FleetLoadProcess.run([
      "--call", "grpc.testing.BenchmarkService/UnaryCall", "--response-size", "1100",
      "-n", "200", "-c", "4", "--format", "json", "--warmup", "0",
    ])
    let report = try FleetLoadProcess.report(result)
    #expect(report["statusCodes"] as? [String: Int] == ["OK": 200], "\(result)")
    #expect(report["responseBytesPerCall"] as? Double == 1_111, "\(result)")
  }

  @Test("a streaming workload reports no responseBytesPerCall")
  func noResponseBytesForStreams() async throws {
    let result = try await FleetLoadProcess.run([
      "--call", "grpc.testing.TestService/StreamingOutputCall", "--response-size", "64",
      "--stream-messages", "5", "-n", "50", "-c", "1", "--format", "json", "--warmup", "0",
    ])
    let report = try FleetLoadProcess.report(result)
    #expect(report["responseBytesPerCall"] == nil, "\(result)")
    #expect((report["count"] as? Int ?? 0) > 0, "\(result)")
  }

  @Test("--executor pool runs the workers on the global executor, with the same results")
  func poolExecutor() async throws {
    let result = try await FleetLoadProcess.run([
      "-n", "300", "-c", "10", "--executor", "pool", "--format", "json", "--warmup", "0",
    ])
    let report = try FleetLoadProcess.report(result)
    #expect(report["executor"] as? String == "pool")
    #expect(report["statusCodes"] as? [String: Int] == ["OK": 300], "\(result)")
  }

  @Test("--call with an unknown workload fails and names the workloads")
  func unknownCallIsRefused() async throws {
    let result = try await FleetLoadProcess.run(["--call", "Nope"])
    #expect(result.status != 0, "\(result)")
    #expect(result.stderr.contains("--call Nope is not a workload"), "\(result)")
    #expect(
      result.stderr.contains("grpc.testing.BenchmarkService/StreamingFromServer"), "\(result)")
  }
}
