import ArgumentParser
import Foundation
import FleetCodecBenchmark
import FleetProtos

/// Encode and decode cost of the fully populated sample Trip, per operation, beside
/// protobuf-c's own unpack and pack of the same bytes.
///
/// The report gives the median and spread over interleaved runs, and allocations per
/// operation, which is what a noisy 2-core machine can honestly say. Build in release:
/// `swift run -c release fleet-codec-bench`. swift-protobuf's figures for the same bytes come
/// from `Benchmarks/`'s `codec-bench`, which runs all of these too.
@main
struct FleetCodecBench: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleet-codec-bench",
    abstract: "Time protobuf-c encode and decode of a realistic, fully populated Trip.")

  @OptionGroup var options: CodecBenchmarkOptions

  @Option(
    help: ArgumentHelp(
      "Code the Trip encoded in this file (e.g. a GetTrip answer saved from fleet-sim) instead "
        + "of the sample; issue 37's goals are judged for the sample only.",
      valueName: "path"))
  var tripFile: String?

  func run() throws {
    let trip: FleetEngine.Trip
    let bytes: [UInt8]
    if let tripFile {
      guard let data = FileManager.default.contents(atPath: tripFile) else {
        throw ValidationError("cannot read --trip-file \(tripFile)")
      }
      bytes = [UInt8](data)
      trip = try FleetEngine.Trip(serializedBytes: bytes)
      print("message: maps.fleetengine.v1.Trip from \(tripFile), \(bytes.count) bytes encoded")
    } else {
      trip = TripCodecOperations.sample
      bytes = trip.serializedBytes()
      guard try FleetEngine.Trip(serializedBytes: bytes) == trip else {
        throw ValidationError("the sample trip does not survive a round trip; not measuring")
      }
      print("message: maps.fleetengine.v1.Trip, every field set, \(bytes.count) bytes encoded")
    }
    print(
      "runs: \(options.runs) x \(options.iterations) operations, interleaved "
        + "(median [min-max] per operation)")
    let results = CodecBenchmark(options: options).run(
      TripCodecOperations.ours(trip, bytes) + TripCodecOperations.protobufC(bytes))
    // The goals name the sample's figures; another trip's lines are for comparison only.
    guard tripFile == nil else { return }
    print("")
    for line in TripCodecOperations.goalLines(results) { print(line) }
  }
}
