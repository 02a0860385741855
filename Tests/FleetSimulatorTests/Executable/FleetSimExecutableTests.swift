import Foundation
import GRPCWire
import PeerSupport
import Testing

@testable import FleetSimulator

#if canImport(Glibc)
  import Glibc
#endif

/// `fleet-sim` as a black box: its output contract, its flags, and clients other than ours.
@Suite("fleet-sim executable")
struct FleetSimExecutableTests {
  func getTrip(port: Int, _ name: String, token: String = "t") async throws -> FleetEngine.Trip {
    let channel = GRPCChannel(host: "127.0.0.1", port: port)
    defer { channel.close() }
    var request = FleetEngine.GetTripRequest()
    request.name = name
    return try await channel.unary(
      FleetEngine.TripService.getTrip, request, options: SimulatorHarness.call(token: token)
    ).message
  }

  @Test("the first line is `listening on HOST:PORT`; --trips N names them; SIGTERM exits 0")
  func contract() async throws {
    let sim = try await FleetSimProcess.start(["--port", "0", "--trips", "12", "--time-scale", "1"])
    let port = try #require(sim.port, "\(sim.lines)")
    #expect(sim.lines.first == "listening on 127.0.0.1:\(port)")
    let names = try await eventually("the trips line") { sim.lines.count >= 2 ? sim.lines : nil }
    #expect(
      names[1]
        == "created 12 trips: providers/sim-provider/trips/trip-01 ... providers/sim-provider/trips/trip-12"
    )
    let trip = try await getTrip(port: port, "providers/sim-provider/trips/trip-07")
    #expect(trip.tripStatus == .new && trip.vehicleID == "sim-vehicle-7")
    #expect(try await sim.terminate(SIGTERM) == .exited(0), "stderr: \(sim.stderr)")
  }

  @Test("--trip-kind mixed: multi-stop, reassigned and shared trips, the same output lines")
  func tripKinds() async throws {
    let sim = try await FleetSimProcess.start([
      "--trips", "5", "--time-scale", "1", "--trip-kind", "mixed", "--provider", "kinds",
    ])
    let port = try #require(sim.port, "\(sim.lines)")
    let names = try await eventually("the trips line") { sim.lines.count >= 2 ? sim.lines : nil }
    #expect(
      names[1] == "created 5 trips: providers/kinds/trips/trip-1 ... providers/kinds/trips/trip-5")
    let trips = try await (1...5).asyncMap {
      try await getTrip(port: port, "providers/kinds/trips/trip-\($0)")
    }
    #expect(trips.map(\.intermediateDestinations.count) == [0, 3, 0, 0, 0])
    #expect(trips.map(\.tripType) == [.exclusive, .exclusive, .exclusive, .shared, .shared])
    #expect(trips[3].vehicleID == trips[4].vehicleID)
    #expect(trips[4].remainingWaypoints.map(\.tripID) == ["trip-4", "trip-5", "trip-4", "trip-5"])
    #expect(Set(trips.map(\.vehicleID)).count == 4)
    #expect(try await sim.terminate() == .exited(0))
  }

  @Test("SIGINT also shuts it down gracefully")
  func interrupt() async throws {
    let sim = try await FleetSimProcess.start([])
    #expect(sim.port != nil)
    #expect(try await sim.terminate(SIGINT) == .exited(0), "stderr: \(sim.stderr)")
  }

  @Test("Google's Python client library creates, gets, updates and searches trips on fleet-sim")
  func googleClientLibrary() async throws {
    let sim = try await FleetSimProcess.start(["--time-scale", "1"])
    let port = try #require(sim.port)
    let output = try await PythonPeer.run(
      "sim_google_client.py", ["--target", "127.0.0.1:\(port)"], timeout: .seconds(60))
    output.attach(as: "sim_google_client")
    #expect(output.status == 0, "\(output.transcript)")
    #expect(output.stdoutText.contains("RESULT ok"), "\(output.transcript)")
    let checks = output.stdoutText.split(separator: "\n").filter { $0.hasPrefix("CHECK ") }
    #expect(checks.count >= 30, "\(checks.count) checks passed")
    #expect(try await sim.terminate() == .exited(0))
  }

  @Test("fault and token flags reach the server")
  func flags() async throws {
    let failing = try await FleetSimProcess.start([
      "--trips", "1", "--fail-rate", "1", "--fail-code", "aborted", "--latency-ms", "100",
    ])
    let failingPort = try #require(failing.port)
    let started = ContinuousClock.now
    let error = await #expect(throws: RPCError.self) {
      try await getTrip(port: failingPort, "providers/sim-provider/trips/trip-1")
    }
    #expect(error?.code == .aborted && error?.errorInfo?.reason == "SIMULATED_FAULT")
    #expect(ContinuousClock.now - started >= .milliseconds(100))
    #expect(try await failing.terminate() == .exited(0))

    let strict = try await FleetSimProcess.start(["--trips", "2", "--strict-tokens"])
    let strictPort = try #require(strict.port)
    let denied = await #expect(throws: RPCError.self) {
      try await getTrip(
        port: strictPort, "providers/sim-provider/trips/trip-1", token: "sim:trip-2")
    }
    #expect(denied?.code == .permissionDenied)
    let allowed = try await getTrip(
      port: strictPort, "providers/sim-provider/trips/trip-1", token: "sim:trip-1")
    #expect(allowed.name.hasSuffix("trip-1"))
    #expect(try await strict.terminate() == .exited(0))
  }

  @Test("with --tls-cert/--tls-key it serves TLS (ALPN h2) to a client that trusts the CA")
  func servesTLS() async throws {
    let fixtures = try await TLSFixtures.shared
    let sim = try await FleetSimProcess.start([
      "--trips", "1", "--tls-cert", fixtures.certificate(.server), "--tls-key",
      fixtures.key(.server),
    ])
    let port = try #require(sim.port, "\(sim.lines)")
    var options = ChannelOptions()
    options.transportSecurity = .tls(
      TLSConfiguration(
        trustRoots: .pemFile(fixtures.caCertificate), serverHostnameOverride: TLSFixtures.serverName
      ))
    let channel = GRPCChannel(host: "127.0.0.1", port: port, options: options)
    defer { channel.close() }
    var request = FleetEngine.GetTripRequest()
    request.name = "providers/sim-provider/trips/trip-1"
    let trip = try await channel.unary(
      FleetEngine.TripService.getTrip, request, options: SimulatorHarness.call(token: "t")
    ).message
    #expect(trip.name == request.name)
    #expect(try await sim.terminate() == .exited(0))
    let unpaired = try await FleetSimProcess.run(["--tls-cert", fixtures.certificate(.server)])
    #expect(unpaired.status == 64)
    #expect(unpaired.stderr.contains("--tls-key"), "\(unpaired.stderr)")
  }

  @Test(
    "bad flags are refused before listening",
    arguments: [
      ["--fail-code", "OK"], ["--fail-rate", "2"], ["--time-scale", "0"], ["--port", "70000"],
      ["--goaway-every", "-1"], ["--provider", "a/b"], ["--trip-kind", "pooled"],
    ])
  func badFlags(_ arguments: [String]) async throws {
    let result = try await FleetSimProcess.run(arguments)
    #expect(result.status == 64, "\(result.stderr)")
    #expect(!result.stdout.contains("listening"))
  }

  @Test("a port in use is reported and exits non-zero")
  func portInUse() async throws {
    let first = try await FleetSimProcess.start([])
    let port = try #require(first.port)
    let second = try await FleetSimProcess.run(["--port", "\(port)"])
    #expect(second.status == 1)
    #expect(second.stderr.contains("cannot listen on 127.0.0.1:\(port)"), "\(second.stderr)")
    #expect(try await first.terminate() == .exited(0))
  }
}

extension Sequence {
  /// The results of `transform` on each element, in order, one at a time.
  fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
    var results: [T] = []
    for element in self { results.append(try await transform(element)) }
    return results
  }
}
