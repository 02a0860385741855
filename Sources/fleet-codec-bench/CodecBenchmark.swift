import ArgumentParser
import CAllocationCounter
import FleetProtos
import FleetProtosFixtures

/// Encode and decode cost of the fully populated sample Trip, per operation.
///
/// Each run times a batch of operations with the monotonic clock and counts the heap
/// allocations the batch made; the report gives the median and spread over the runs, which
/// is what a noisy 2-core machine can honestly say. Build in release: `swift run -c release
/// fleet-codec-bench`.
@main
struct CodecBenchmark: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleet-codec-bench",
    abstract: "Time protobuf-c encode and decode of a realistic, fully populated Trip.")

  @Option(name: .shortAndLong, help: "Operations per run.")
  var iterations = 20_000

  @Option(name: .shortAndLong, help: "Runs; the median is reported.")
  var runs = 7

  func validate() throws {
    guard iterations > 0 else { throw ValidationError("--iterations must be at least 1") }
    guard runs > 0 else { throw ValidationError("--runs must be at least 1") }
  }

  func run() throws {
    let trip = SampleTrips.fullyPopulated
    let bytes = trip.serializedBytes()
    guard try FleetEngine.Trip(serializedBytes: bytes) == trip else {
      throw ValidationError("the sample trip does not survive a round trip; not measuring")
    }
    print("message: maps.fleetengine.v1.Trip, every field set, \(bytes.count) bytes encoded")
    print("runs: \(runs) x \(iterations) operations (median [min-max] per operation)")
    report(
      "encode", measure { for _ in 0..<iterations { blackHole(trip.serializedBytes().count) } })
    var buffer: [UInt8] = []
    buffer.reserveCapacity(bytes.count * 2)
    report(
      "encode into a reused buffer",
      measure {
        for _ in 0..<iterations {
          buffer.removeAll(keepingCapacity: true)
          trip.encode(appendingTo: &buffer)
          blackHole(buffer.count)
        }
      })
    report(
      "decode",
      measure {
        for _ in 0..<iterations {
          blackHole((try? FleetEngine.Trip(serializedBytes: bytes))?.route.count ?? -1)
        }
      })
  }

  struct Sample {
    var nanoseconds: Double
    var allocations: Double
  }

  func measure(_ body: () -> Void) -> [Sample] {
    body()  // warm-up
    return (0..<runs).map { _ in
      let allocationsBefore = fleet_allocation_count()
      let start = ContinuousClock.now
      body()
      let elapsed = ContinuousClock.now - start
      let allocations = fleet_allocation_count() - allocationsBefore
      let ns = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
      return Sample(
        nanoseconds: ns / Double(iterations), allocations: Double(allocations) / Double(iterations))
    }
  }

  func report(_ name: String, _ samples: [Sample]) {
    let ns = samples.map(\.nanoseconds).sorted()
    let allocations = samples.map(\.allocations).sorted()
    func f(_ x: Double) -> String { String(Int(x.rounded())) }
    let padded = name + String(repeating: " ", count: max(0, 28 - name.count))
    print(
      "\(padded) \(f(ns[ns.count / 2])) ns [\(f(ns.first!))-\(f(ns.last!))]"
        + "   \(tenths(allocations[allocations.count / 2])) allocations/op")
  }
}

func tenths(_ value: Double) -> String {
  String((value * 10).rounded() / 10)
}

@inline(never)
func blackHole(_ value: Int) {
  if value == .min { print("unreachable") }
}
