import FleetProtos
import GRPCWire
import Synchronization

/// Runs closed-loop GetTrip calls: `concurrency` workers, each starting its next call as soon
/// as the last one ends, until the stop condition is met.
///
/// Each worker keeps its own samples and they are merged at the end, so the only state the
/// workers share on the hot path is one atomic ticket counter.
struct LoadRunner: Sendable {
  let channel: GRPCChannel
  let tripNames: [String]
  let concurrency: Int
  let options: CallOptions

  /// What one phase measured: per-call latencies and outcomes.
  struct Samples: Sendable {
    /// Latency of each call, in nanoseconds, in no particular order.
    var latencies: [Int64] = []
    /// Calls per gRPC status code name (`OK`, `UNAVAILABLE`, ...).
    var codes: [String: Int] = [:]
    /// Failed calls per error message.
    var errors: [String: Int] = [:]

    mutating func merge(_ other: Samples) {
      latencies += other.latencies
      codes.merge(other.codes, uniquingKeysWith: +)
      errors.merge(other.errors, uniquingKeysWith: +)
    }
  }

  /// Hands out call numbers to the workers; a number past the limit means "stop".
  private final class Tickets: Sendable {
    let next = Atomic<Int>(0)
  }

  /// Runs calls until `count` have been started, or until `deadline` if it comes first.
  func run(count: Int?, until deadline: ContinuousClock.Instant?) async -> Samples {
    let tickets = Tickets()
    return await withTaskGroup(of: Samples.self) { group in
      for _ in 0..<concurrency {
        group.addTask {
          var samples = Samples()
          let clock = ContinuousClock()
          while true {
            let ticket = tickets.next.wrappingAdd(1, ordering: .relaxed).oldValue
            if let count, ticket >= count { break }
            if let deadline, clock.now >= deadline { break }
            await call(tripNames[ticket % tripNames.count], into: &samples, clock: clock)
          }
          return samples
        }
      }
      var all = Samples()
      all.latencies.reserveCapacity(count ?? 0)
      for await samples in group { all.merge(samples) }
      return all
    }
  }

  private func call(_ name: String, into samples: inout Samples, clock: ContinuousClock) async {
    var request = FleetEngine.GetTripRequest()
    request.name = name
    let start = clock.now
    let code: String
    do {
      _ = try await channel.unary(FleetEngine.TripService.getTrip, request, options: options)
      code = "OK"
    } catch let error as RPCError {
      code = error.code.name
      samples.errors[error.message, default: 0] += 1
    } catch {
      code = StatusCode.unknown.name
      samples.errors["\(error)", default: 0] += 1
    }
    let elapsed = clock.now - start
    samples.latencies.append(
      elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    samples.codes[code, default: 0] += 1
  }
}
