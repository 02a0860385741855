import ArgumentParser
import BenchmarkProtos
import FleetCodecBenchmark
import FleetProtos
import SwiftProtobuf

/// `codec-bench`: `fleet-codec-bench`'s operations on the sample Trip and swift-protobuf's
/// decode and encode of the same bytes, interleaved in one run of one process.
///
/// swift-protobuf's messages are `BenchmarkProtos`' (protoc-gen-swift's code from our
/// Protos/); they decode the bytes our encode wrote and, as checked before measuring, encode
/// them back to the same bytes.
@main
struct CodecBench: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "codec-bench",
    abstract: "fleet-codec-bench beside swift-protobuf: decode and encode of one Trip.")

  @OptionGroup var options: CodecBenchmarkOptions

  static let swiftProtobufDecode = "swift-protobuf decode"

  func run() throws {
    let trip = TripCodecOperations.sample
    let bytes = trip.serializedBytes()
    guard try FleetEngine.Trip(serializedBytes: bytes) == trip else {
      throw ValidationError("the sample trip does not survive a round trip; not measuring")
    }
    let theirs = try Maps_Fleetengine_V1_Trip(serializedBytes: bytes)
    let theirBytes: [UInt8] = try theirs.serializedBytes()
    guard theirBytes.count == bytes.count, theirs.unknownFields.data.isEmpty else {
      throw ValidationError(
        "swift-protobuf reads the sample trip differently (\(theirBytes.count) bytes back of "
          + "\(bytes.count), \(theirs.unknownFields.data.count) unknown); not measuring")
    }
    print("message: maps.fleetengine.v1.Trip, every field set, \(bytes.count) bytes encoded")
    print(
      "runs: \(options.runs) x \(options.iterations) operations, interleaved "
        + "(median [min-max] per operation)")
    var buffer: [UInt8] = []
    let swiftProtobuf = [
      CodecOperation(group: "decode", name: Self.swiftProtobufDecode) {
        (try? Maps_Fleetengine_V1_Trip(serializedBytes: bytes))?.route.count ?? -1
      },
      CodecOperation(group: "encode", name: "swift-protobuf encode") {
        buffer = (try? theirs.serializedBytes()) ?? []
        return buffer.count
      },
    ]
    let results = CodecBenchmark(options: options).run(
      TripCodecOperations.ours(trip, bytes) + TripCodecOperations.protobufC(bytes)
        + swiftProtobuf)
    print("")
    for line in TripCodecOperations.goalLines(results, swiftProtobufDecode: Self.swiftProtobufDecode)
    {
      print(line)
    }
  }
}
