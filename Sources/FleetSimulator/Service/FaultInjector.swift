internal import FleetProtos
internal import FleetSync
internal import GRPCWire

/// Applies ``FaultOptions`` to each call as it arrives: waits the added latency, then fails
/// the call at the configured rate, and counts what it did.
final class FaultInjector: Sendable {
  let options: FaultOptions

  private struct State {
    var random: SplitMix64
    var calls = 0
    var injectedFailures = 0
    var droppedConnections = 0
  }

  private let state: PosixMutex<State>

  init(options: FaultOptions, seed: UInt64) {
    self.options = options
    state = PosixMutex(State(random: SplitMix64(seed: seed ^ 0xFA17)))
  }

  /// How many calls arrived and how many were failed on purpose.
  var counts: (calls: Int, injectedFailures: Int) {
    state.withLock { ($0.calls, $0.injectedFailures) }
  }

  /// How many connections were dropped on purpose.
  var droppedConnections: Int { state.withLock { $0.droppedConnections } }

  /// Waits the added latency (cancellation ends it) before a call is served; returns at
  /// once without one.
  func delay() async throws {
    if options.latency > .zero { try await Task.sleep(for: options.latency) }
  }

  /// Runs before a call of `method` is served (after ``delay()``): counts it, then drops
  /// its connection or throws the injected failure when this call is one to fault.
  func beforeCall(_ method: String, _ context: ServerContext) throws {
    let rate = options.failureRate
    let dropRate = options.dropConnectionRate
    let (fail, drop) = state.withLock { state -> (Bool, Bool) in
      state.calls += 1
      // A rate of 1 faults every call without drawing, so it does not depend on the generator.
      let drop = dropRate >= 1 || (dropRate > 0 && state.random.unit() < dropRate)
      let fail = !drop && (rate >= 1 || (rate > 0 && state.random.unit() < rate))
      if fail { state.injectedFailures += 1 }
      if drop { state.droppedConnections += 1 }
      return (fail, drop)
    }
    if drop {
      context.dropConnection()
      throw RPCError(code: .unavailable, message: "injected fault: the connection was dropped")
    }
    guard fail else { return }
    var more: [ErrorDetail] = []
    if let delay = options.retryDelay {
      var retry = GoogleRPC.RetryInfo()
      retry.retryDelay = GoogleProtobuf.Duration(delay)
      more.append(.retryInfo(retry))
    }
    throw FleetEngineError.make(
      options.failureCode,
      "injected fault: the simulator fails \(Int((rate * 100).rounded()))% of calls with "
        + options.failureCode.name,
      reason: "SIMULATED_FAULT", metadata: ["method": method], more: more)
  }
}
