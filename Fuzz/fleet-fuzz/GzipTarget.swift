@testable import GRPCWire

extension FuzzTarget {
  /// gzip decompression of a compressed message (`grpc-encoding: gzip`), under a size limit.
  ///
  /// Input: a byte choosing the limit, then the compressed bytes.
  static let gzip = FuzzTarget(
    name: "gzip",
    summary: "gzip: output within the limit, exactly at the limit; compress/decompress round trip",
    seeds: gzipSeeds,
    run: fuzzGzip)
}

/// From "no room at all" to the servers' default message limit (4 MiB).
private let gzipLimits = [0, 64, 4_096, 4 << 20]

private func fuzzGzip(_ input: UnsafeRawBufferPointer) {
  guard let selector = input.first else { return }
  let limit = gzipLimits[Int(selector) % gzipLimits.count]
  let compressed = Array(input[1...])
  // What we send, we read back.
  invariant(
    (try? Gzip.decompress(Gzip.compress(compressed), limit: compressed.count)) == compressed,
    "\(compressed.count) bytes do not survive compress and decompress")

  let inflated: [UInt8]
  do {
    inflated = try Gzip.decompress(compressed, limit: limit)
  } catch .tooLarge(let reported) {
    invariant(reported == limit, "tooLarge reports \(reported), the limit is \(limit)")
    return
  } catch {
    return
  }
  invariant(inflated.count <= limit, "inflated \(inflated.count) bytes past the limit \(limit)")
  // The limit is inclusive: exactly the output's size still fits, one byte less does not.
  invariant(
    (try? Gzip.decompress(compressed, limit: inflated.count)) == inflated,
    "\(inflated.count) bytes do not fit a limit of \(inflated.count)")
  if !inflated.isEmpty {
    do {
      _ = try Gzip.decompress(compressed, limit: inflated.count - 1)
      invariant(false, "\(inflated.count) bytes fit a limit of \(inflated.count - 1)")
    } catch {
      invariant(error == .tooLarge(limit: inflated.count - 1), "one byte short gave \(error)")
    }
  }
}

private func gzipSeeds() -> [(name: String, bytes: [UInt8])] {
  let trip = Gzip.compress(SeedMessages.trip.serializedBytes())
  let hello = Gzip.compress(Array("hello".utf8))
  // [limit selector (0: 0, 1: 64, 2: 4 KiB, 3: 4 MiB)] + the compressed bytes.
  return [
    ("trip", [3] + trip),
    ("trip-over-the-limit", [2] + trip),
    ("hello", [1] + hello),
    ("empty-input", [3] + Gzip.compress([])),
    ("zeros-1MiB", [3] + Gzip.compress([UInt8](repeating: 0, count: 1 << 20))),
    ("two-members", [3] + hello + hello),
    ("truncated", [3] + trip.prefix(trip.count / 2)),
    ("bad-crc", [3] + hello.dropLast(8) + [0, 0, 0, 0] + hello.suffix(4)),
    ("zlib-not-gzip", [3, 0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]),
  ]
}
