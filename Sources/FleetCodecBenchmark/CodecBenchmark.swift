public import ArgumentParser
internal import CAllocationCounter

/// One operation a codec benchmark times: a name, the group it is compared within (`decode`,
/// `encode`), and a body that does it once and returns something of the result (so the
/// optimiser cannot drop the work).
public struct CodecOperation {
  public var group: String
  public var name: String
  public var body: () -> Int

  public init(group: String, name: String, body: @escaping () -> Int) {
    self.group = group
    self.name = name
    self.body = body
  }
}

/// The options of `fleet-codec-bench` and of `Benchmarks/`'s `codec-bench`.
public struct CodecBenchmarkOptions: ParsableArguments {
  @Option(name: .shortAndLong, help: "Operations per run.")
  public var iterations = 20_000

  @Option(name: .shortAndLong, help: "Runs of each operation, interleaved; the median is reported.")
  public var runs = 7

  public init() {}

  public func validate() throws {
    guard iterations > 0 else { throw ValidationError("--iterations must be at least 1") }
    guard runs > 0 else { throw ValidationError("--runs must be at least 1") }
  }
}

/// Times codec operations side by side and prints one line per operation: the median time
/// per operation over the runs, their spread, and heap allocations per operation.
///
/// Runs interleave the operations (run 1 of each, then run 2 of each, …), so a change in the
/// machine's load falls on all of them alike; each run times a batch of `iterations`
/// operations with the monotonic clock and counts the allocations the batch made
/// (CAllocationCounter: the executable's malloc, calloc, realloc and memalign).
public struct CodecBenchmark {
  public var options: CodecBenchmarkOptions

  public init(options: CodecBenchmarkOptions) {
    self.options = options
  }

  /// The median of one operation's runs.
  public struct Result {
    public var operation: String
    public var group: String
    public var nanoseconds: Double
    public var lowest: Double
    public var highest: Double
    public var allocations: Double
  }

  /// Measures `operations` and prints a line for each; returns the medians.
  @discardableResult
  public func run(_ operations: [CodecOperation]) -> [Result] {
    for operation in operations { warmUp(operation) }
    var samples = Array(repeating: [(ns: Double, allocations: Double)](), count: operations.count)
    for _ in 0..<options.runs {
      for (index, operation) in operations.enumerated() {
        samples[index].append(sample(operation))
      }
    }
    var results: [Result] = []
    for (operation, runs) in zip(operations, samples) {
      let ns = runs.map(\.ns).sorted()
      let allocations = runs.map(\.allocations).sorted()
      results.append(
        Result(
          operation: operation.name, group: operation.group, nanoseconds: ns[ns.count / 2],
          lowest: ns.first!, highest: ns.last!, allocations: allocations[allocations.count / 2]))
    }
    for result in results {
      let padded =
        result.operation + String(repeating: " ", count: max(0, 44 - result.operation.count))
      print(
        "\(padded) \(Self.whole(result.nanoseconds)) ns [\(Self.whole(result.lowest))-"
          + "\(Self.whole(result.highest))]   \(Self.tenths(result.allocations)) allocations/op")
    }
    return results
  }

  private func warmUp(_ operation: CodecOperation) {
    for _ in 0..<min(options.iterations, 1_000) { blackHole(operation.body()) }
  }

  private func sample(_ operation: CodecOperation) -> (ns: Double, allocations: Double) {
    let body = operation.body
    let iterations = options.iterations
    let allocationsBefore = fleet_allocation_count()
    let start = ContinuousClock.now
    for _ in 0..<iterations { blackHole(body()) }
    let elapsed = ContinuousClock.now - start
    let allocations = fleet_allocation_count() - allocationsBefore
    let ns =
      Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    return (ns / Double(iterations), Double(allocations) / Double(iterations))
  }

  /// One line per goal: `name: a / b = ratio× (goal ≤ limit×): met` (or **missed**).
  public static func ratioLine(
    _ name: String, _ results: [Result], _ measured: String, _ anchor: String, atMost limit: Double
  ) -> String? {
    guard let a = results.first(where: { $0.operation == measured }),
      let b = results.first(where: { $0.operation == anchor })
    else { return nil }
    let ratio = a.nanoseconds / b.nanoseconds
    let verdict = ratio <= limit ? "met" : "missed"
    return "\(name): \(whole(a.nanoseconds)) / \(whole(b.nanoseconds)) ns = "
      + "\(hundredths(ratio))× (goal ≤ \(limit)×): \(verdict)"
  }

  static func whole(_ x: Double) -> String { String(Int(x.rounded())) }
  static func tenths(_ x: Double) -> String { String((x * 10).rounded() / 10) }
  static func hundredths(_ x: Double) -> String { String((x * 100).rounded() / 100) }
}

@inline(never)
func blackHole(_ value: Int) {
  if value == .min { print("unreachable") }
}
