internal import CProtobufC
public import FleetProtos
internal import FleetProtosC
internal import FleetProtosFixtures
@_spi(GeneratedCode) internal import ProtoRuntime

/// The operations `fleet-codec-bench` times on one realistic Trip: our decode and encode, and
/// protobuf-c's own unpack and pack of the same bytes (C only, no Swift values), which are
/// what the Swift side adds cost to.
public enum TripCodecOperations {
  /// The fully populated sample Trip (every field set) the benchmark codes.
  public static var sample: FleetEngine.Trip { SampleTrips.fullyPopulated }

  /// `fleet-codec-bench`'s names of the operations the goals compare.
  public static let decode = "decode"
  public static let encodeIntoBuffer = "encode into a reused buffer"
  public static let rawUnpack = "protobuf-c unpack + free (raw C)"
  /// The decode before issue 37's straight decode: protobuf-c's unpack into an arena on the
  /// stack, then the Swift values built from its C tree.
  public static let decodeThroughC = "decode through protobuf-c's unpack (decodeThroughC)"
  public static let rawPack = "protobuf-c pack into a reused buffer (raw C)"

  /// Our decode and encode of `trip`, whose encoding is `bytes`.
  public static func ours(_ trip: FleetEngine.Trip, _ bytes: [UInt8]) -> [CodecOperation] {
    var buffer: [UInt8] = []
    buffer.reserveCapacity(bytes.count * 2)
    return [
      CodecOperation(group: "decode", name: decode) {
        (try? FleetEngine.Trip(serializedBytes: bytes))?.route.count ?? -1
      },
      CodecOperation(group: "decode", name: decodeThroughC) {
        (try? bytes.withUnsafeBytes { raw in try FleetEngine.Trip.decodeThroughC(raw) })?.route
          .count ?? -1
      },
      CodecOperation(group: "encode", name: "encode") { trip.serializedBytes().count },
      CodecOperation(group: "encode", name: encodeIntoBuffer) {
        buffer.removeAll(keepingCapacity: true)
        trip.encode(appendingTo: &buffer)
        return buffer.count
      },
    ]
  }

  /// protobuf-c's unpack (with its default allocator, as a C program would call it, and into
  /// our arena, as our decode does) and pack of `bytes`, a Trip's encoding.
  public static func protobufC(_ bytes: [UInt8]) -> [CodecOperation] {
    // Copies that live as long as the process: the closures read them on every call.
    let input = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
    _ = input.initialize(from: bytes)
    let descriptor = FleetEngine.Trip.cDescriptor
    // The C message tree pack reads: unpacked once, kept.
    guard let tree = protobuf_c_message_unpack(descriptor, nil, input.count, input.baseAddress)
    else { preconditionFailure("protobuf-c does not unpack the sample trip") }
    let output = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count * 2)
    return [
      CodecOperation(group: "decode", name: rawUnpack) {
        guard let message = protobuf_c_message_unpack(descriptor, nil, input.count, input.baseAddress)
        else { return -1 }
        let fields = Int(message.pointee.n_unknown_fields)
        protobuf_c_message_free_unpacked(message, nil)
        return fields
      },
      CodecOperation(group: "decode", name: "protobuf-c unpack into our arena (raw C)") {
        (try? FleetEngine.Trip.withUnpacked(UnsafeRawBufferPointer(input)) { _ in 0 }) ?? -1
      },
      CodecOperation(group: "encode", name: rawPack) {
        let size = protobuf_c_message_get_packed_size(tree)
        return protobuf_c_message_pack(tree, output) + size
      },
    ]
  }

  /// The goals of issue 37 that the results of these operations (and swift-protobuf's, when
  /// `swiftProtobufDecode` names one of them) meet or miss, one line each.
  public static func goalLines(
    _ results: [CodecBenchmark.Result], swiftProtobufDecode: String? = nil
  ) -> [String] {
    var lines: [String] = []
    if let line = CodecBenchmark.ratioLine(
      "decode vs protobuf-c's raw unpack", results, decode, rawUnpack, atMost: 1.3)
    {
      lines.append(line)
    }
    if let ours = results.first(where: { $0.operation == decode }) {
      let verdict = ours.allocations <= 16 ? "met" : "missed"
      lines.append(
        "decode allocations: \(CodecBenchmark.tenths(ours.allocations)) per op (goal ≤ 16): "
          + verdict)
    }
    if let swiftProtobufDecode,
      let line = CodecBenchmark.ratioLine(
        "decode vs swift-protobuf's", results, decode, swiftProtobufDecode, atMost: 0.5)
    {
      lines.append(line)
    }
    if let line = CodecBenchmark.ratioLine(
      "encode (reused buffer) vs protobuf-c's raw pack", results, encodeIntoBuffer, rawPack,
      atMost: 1.3)
    {
      lines.append(line)
    }
    return lines
  }
}
