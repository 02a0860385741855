import GRPCWire
import Testing

@testable import FleetSimulator

@Suite("Fault injection")
struct FaultInjectionTests {
  @Test("a failure rate of 1 fails every call with the configured code and details")
  func alwaysFail() async throws {
    var options = fastOptions(timeScale: 1)
    options.faults.failureRate = 1
    options.faults.failureCode = .resourceExhausted
    options.faults.retryDelay = .milliseconds(250)
    try await SimulatorHarness.with(options) { sim in
      let name = try sim.simulator.createDemoTrip()
      let create = await #expect(throws: RPCError.self) { try await sim.createTrip() }
      let get = await #expect(throws: RPCError.self) { try await sim.getTrip(name) }
      var watch = FleetFeed.WatchTripRequest()
      watch.name = name
      let stream = await #expect(throws: RPCError.self) {
        try await sim.channel.serverStreaming(
          FleetFeed.TripFeed.watchTrip, watch, options: SimulatorHarness.call()
        ) { updates in for try await _ in updates {} }
      }
      for error in [create, get, stream] {
        #expect(error?.code == .resourceExhausted)
        #expect(error?.errorInfo?.reason == "SIMULATED_FAULT")
        #expect(error?.retryDelay == .milliseconds(250))
      }
      #expect(sim.simulator.statistics.injectedFailures == 3)
      #expect(sim.simulator.statistics.calls == 3)
    }
  }

  @Test("a drop rate of 1 closes the connection of every call: interrupted UNAVAILABLE")
  func dropConnections() async throws {
    var options = fastOptions(timeScale: 1)
    options.faults.dropConnectionRate = 1
    try await SimulatorHarness.with(options) { sim in
      let name = try sim.simulator.createDemoTrip()
      for _ in 0..<3 {
        let error = await #expect(throws: RPCError.self) { try await sim.getTrip(name) }
        #expect(error?.code == .unavailable, "\(String(describing: error))")
        #expect(error?.isInterrupted == true, "\(String(describing: error))")
      }
      #expect(sim.simulator.core.faults.droppedConnections == 3)
    }
  }

  @Test("a failure rate of 0.3 fails about 30% of calls")
  func someFail() async throws {
    var options = fastOptions(timeScale: 1)
    options.faults.failureRate = 0.3
    try await SimulatorHarness.with(options) { sim in
      let name = try sim.simulator.createDemoTrip()
      var failures = 0
      for _ in 0..<200 {
        do {
          _ = try await sim.getTrip(name)
        } catch let error as RPCError {
          #expect(error.code == .unavailable)
          failures += 1
        }
      }
      #expect((30...90).contains(failures), "\(failures) of 200 failed")
    }
  }

  @Test("added latency delays every answer")
  func latency() async throws {
    var options = fastOptions(timeScale: 1)
    options.faults.latency = .milliseconds(150)
    try await SimulatorHarness.with(options) { sim in
      let name = try sim.simulator.createDemoTrip()
      _ = try await sim.getTrip(name)  // connect first
      let clock = ContinuousClock()
      for _ in 0..<3 {
        let elapsed = try await clock.measure { _ = try await sim.getTrip(name) }
        #expect(elapsed >= .milliseconds(150) && elapsed < .seconds(2), "\(elapsed)")
      }
    }
  }

  @Test("GOAWAY restarts: clients reconnect and every call succeeds")
  func goAway() async throws {
    var options = fastOptions(timeScale: 1)
    options.faults.goAwayInterval = .milliseconds(200)
    options.faults.goAwayGracePeriod = .milliseconds(100)
    // A reconnect may hit the moment between the old server closing its socket and the new
    // one listening; waitForReady with a short backoff rides over it.
    var channelOptions = ChannelOptions()
    channelOptions.backoff.initial = .milliseconds(10)
    channelOptions.backoff.maximum = .milliseconds(50)
    try await SimulatorHarness.with(options, channelOptions: channelOptions) { sim in
      let name = try sim.simulator.createDemoTrip()
      var request = FleetEngine.GetTripRequest()
      request.name = name
      var call = SimulatorHarness.call()
      call.waitForReady = true
      // Calls every 10 ms until the server has restarted 3 times and 40 calls went through
      // (about 1 s on a quiet machine; a loaded one restarts later), 30 s at most. A call
      // that fails throws and fails the test.
      var succeeded = 0
      let deadline = ContinuousClock.now + .seconds(30)
      let simulator = sim.simulator
      while simulator.statistics.goAways < 3 || succeeded < 40, ContinuousClock.now < deadline {
        _ = try await sim.channel.unary(FleetEngine.TripService.getTrip, request, options: call)
        succeeded += 1
        try await Task.sleep(for: .milliseconds(10))
      }
      #expect(sim.simulator.statistics.goAways >= 3)
      #expect(succeeded >= 40, "\(succeeded) calls")
    }
  }
}
