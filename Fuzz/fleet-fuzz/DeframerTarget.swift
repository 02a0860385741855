@testable import GRPCWire

extension FuzzTarget {
  /// MessageDeframer fed a stream's DATA in pieces, against a one-pass reading of the same
  /// bytes.
  ///
  /// Input: a chunk size (0: all at once), a limit selector, then the stream's bytes.
  static let deframer = FuzzTarget(
    name: "deframer",
    summary: "MessageDeframer in chunks: same frames and failure as one pass; nothing lost",
    seeds: deframerSeeds,
    run: fuzzDeframer)
}

/// The limits the second byte picks from: none, small, and the servers' default (4 MiB).
private let deframerLimits = [0, 100, 4 << 20]

private func fuzzDeframer(_ input: UnsafeRawBufferPointer) {
  guard input.count >= 2 else { return }
  let chunkSize = Int(input[0])
  let limit = deframerLimits[Int(input[1]) % deframerLimits.count]
  let stream = UnsafeRawBufferPointer(rebasing: input[2...])
  let expected = readFramesInOnePass(stream, limit: limit)

  var deframer = MessageDeframer(maxMessageSize: limit)
  var frames: [MessageDeframer.Frame] = []
  var offset = 0
  repeat {
    let end = chunkSize == 0 ? stream.count : min(offset + chunkSize, stream.count)
    do {
      frames += try deframer.append(UnsafeRawBufferPointer(rebasing: stream[offset..<end]))
    } catch {
      // Frames completed by the failing piece are dropped with it: the stream is failed.
      invariant(error == expected.failure, "threw \(error), one pass says \(expected)")
      invariant(frames.count <= expected.frames.count, "more frames than one pass before \(error)")
      checkSame(frames, expected.frames[..<frames.count])
      return
    }
    offset = end
  } while offset < stream.count
  invariant(expected.failure == nil, "no failure; one pass says \(expected.failure!)")
  checkSame(frames, expected.frames[...])
  let framed = frames.reduce(0) { $0 + $1.wireSize }
  invariant(
    framed + deframer.bufferedByteCount == stream.count,
    "\(framed) bytes framed + \(deframer.bufferedByteCount) buffered != \(stream.count) received")
}

private func checkSame(_ frames: [MessageDeframer.Frame], _ expected: ArraySlice<ExpectedFrame>) {
  for (frame, wanted) in zip(frames, expected) {
    invariant(
      frame.compressed == wanted.compressed && frame.payload == wanted.payload,
      "frame of \(frame.payload.count) bytes differs from one pass's \(wanted.payload.count)")
  }
  invariant(
    frames.count == expected.count, "\(frames.count) frames, one pass has \(expected.count)")
}

private struct ExpectedFrame {
  var compressed: Bool
  var payload: [UInt8]
}

/// The reference: PROTOCOL-HTTP2.md's Length-Prefixed-Message read straight off the whole
/// stream, one field at a time.
private func readFramesInOnePass(_ stream: UnsafeRawBufferPointer, limit: Int) -> (
  frames: [ExpectedFrame], failure: MessageDeframer.Failure?
) {
  var frames: [ExpectedFrame] = []
  var rest = stream[...]
  while rest.count >= 5 {
    let flag = rest.removeFirst()
    if flag > 1 { return (frames, .badFlag(flag)) }
    let length = rest.prefix(4).reduce(0) { $0 * 256 + Int($1) }
    rest.removeFirst(4)
    if length > limit { return (frames, .tooLarge(announced: length, limit: limit)) }
    if rest.count < length { break }
    frames.append(ExpectedFrame(compressed: flag == 1, payload: Array(rest.prefix(length))))
    rest.removeFirst(length)
  }
  return (frames, nil)
}

private func deframerSeeds() -> [(name: String, bytes: [UInt8])] {
  func framed(_ messages: [[UInt8]], compress: Bool = false) -> [UInt8] {
    var stream: [UInt8] = []
    for message in messages {
      MessageFramer.append(to: &stream, compress: compress) { $0 += message }
    }
    return stream
  }
  // [chunk size, limit selector (0: none, 1: 100 bytes, 2: 4 MiB)] + the stream.
  let trip = SeedMessages.trip.serializedBytes()
  let request = SeedMessages.getTripRequest.serializedBytes()
  return [
    ("trip-whole", [0, 2] + framed([trip])),
    ("trip-in-7-byte-chunks", [7, 2] + framed([trip])),
    ("trip-gzip", [0, 2] + framed([trip], compress: true)),
    ("two-requests-byte-at-a-time", [1, 2] + framed([request, request])),
    ("requests-and-a-partial-one", [64, 2] + framed([request, request, request]).dropLast(9)),
    ("empty-messages", [3, 0] + framed([[], [], []])),
    ("prefix-split", [2, 2] + framed([request]).prefix(4)),
    ("bad-flag", [0, 2] + [2, 0, 0, 0, 1, 0]),
    ("over-the-limit", [5, 1] + framed([request, trip])),
    ("announces-4-GiB", [0, 2] + [0, 0xFF, 0xFF, 0xFF, 0xFF]),
  ]
}
