import FleetSync
import Foundation
import Testing

@testable import FleetConsumer

#if canImport(Glibc)
  import Glibc
#endif

/// The issue's load acceptance: 1,000 trips followed at once through one `TripService`,
/// each to COMPLETE, with the connections used and the memory per followed trip measured.
///
/// Figures are printed (and attached) for the README: run this suite alone for them,
/// `swift test --filter ThousandTrips`, since the heap is the whole process's.
@Suite("1,000 trips through one TripService")
struct ThousandTripsTests {
  static let trips = 1000

  /// Counts terminal statuses over every model it is registered with.
  final class CompletionCounter: TripModelSubscriber {
    private struct State {
      var completed = 0
      var failures = 0
      var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = PosixMutex(State())
    let target: Int

    init(target: Int) {
      self.target = target
    }

    var completed: Int { state.withLock { $0.completed } }
    var failures: Int { state.withLock { $0.failures } }

    func tripModel(_ model: TripModel, didUpdateTripStatus status: FleetEngine.TripStatus) {
      guard status == .complete else { return }
      let done = state.withLock { state -> CheckedContinuation<Void, Never>? in
        state.completed += 1
        guard state.completed == target else { return nil }
        defer { state.waiter = nil }
        return state.waiter
      }
      done?.resume()
    }

    func tripModel(_ model: TripModel, didFailUpdateTripWithError error: RPCError) {
      state.withLock { $0.failures += 1 }
    }

    func allCompleted() async {
      await withCheckedContinuation { continuation in
        let now = state.withLock { state in
          if state.completed >= target { return true }
          state.waiter = continuation
          return false
        }
        if now { continuation.resume() }
      }
    }
  }

  /// The process's resident set now (`VmRSS` of /proc/self/status), in bytes. glibc's
  /// `mallinfo2` would give the heap alone, but Swift's Glibc module does not import it.
  static func residentBytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    let kilobytes =
      Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
    return kilobytes * 1024
  }

  @Test(
    "each of 1,000 trips reaches COMPLETE over a handful of connections", .timeLimit(.minutes(2)))
  func thousandTrips() async throws {
    let engine = try await FakeFleetEngine.start(quiet: true)
    let prefix = "providers/\(FleetTest.provider)/trips/load-"
    try engine.addTemplate(prefix: prefix, steps: Lifecycle.steps(tripID: "load"))
    let baseline = Self.residentBytes()
    let service = try FleetTest.service(engine, pollInterval: .milliseconds(250))
    let counter = CompletionCounter(target: Self.trips)

    // Peak memory while following, sampled every 20 ms.
    let peak = PosixMutex(0)
    let sampler = Task {
      while !Task.isCancelled {
        let now = Self.residentBytes()
        peak.withLock { $0 = max($0, now) }
        try? await Task.sleep(for: .milliseconds(20))
      }
    }
    let clock = ContinuousClock()
    let started = clock.now
    var models: [TripModel] = []
    models.reserveCapacity(Self.trips)
    for index in 0..<Self.trips {
      let model = try service.tripModel(forTripName: "\(prefix)\(index)")
      model.register(counter)
      models.append(model)
    }
    await counter.allCompleted()
    let elapsed = clock.now - started
    for model in models { await model.loopEnded() }
    sampler.cancel()
    await sampler.value

    let connections = engine.connectionCount
    let followed = models.count
    models.removeAll()
    await engine.stop()
    let summary = try #require(engine.server.events.first { $0.kind == "summary" })
    let growth = peak.withLock { $0 } - baseline
    let perTrip = growth / Self.trips
    let report = """
      \(Self.trips) trips to COMPLETE in \(elapsed) (6 polls each, poll interval 250 ms); \
      GetTrip calls: \(summary["requests"] ?? "?"); connections: \(connections); \
      peak RSS \(baseline / 1024) KiB before, +\(growth / 1024) KiB while following \
      (\(perTrip) bytes per trip)
      """
    print("ThousandTrips: \(report)")
    Attachment.record(report, named: "thousand-trips.txt")

    #expect(counter.completed == Self.trips)
    #expect(followed == Self.trips)
    #expect(counter.failures == 0)
    // Six steps per trip and not one GetTrip after COMPLETE.
    #expect(summary["requests"] == "\(Self.trips * 6)")
    #expect(summary["connections"] == "\(connections)")
    #expect(connections >= 1 && connections <= 8)
    // A generous bound; the figure itself goes to the README.
    #expect(perTrip < 256 << 10)
  }
}
