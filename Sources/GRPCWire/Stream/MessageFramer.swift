/// Writes gRPC's 5-byte prefix (compressed flag, big-endian length) and the message after it.
enum MessageFramer {
  /// Bytes of the prefix before each message.
  static let prefixLength = 5

  /// Appends one framed message to `buffer`, serialising it in place after a placeholder prefix
  /// so an uncompressed message is written once, with no copy.
  static func append(
    to buffer: inout [UInt8], compress: Bool,
    serialize: (inout [UInt8]) throws -> Void
  ) rethrows {
    let start = buffer.count
    buffer.append(contentsOf: [0, 0, 0, 0, 0])
    try serialize(&buffer)
    if compress {
      let compressed = Gzip.compress(Array(buffer[(start + 5)...]))
      buffer.removeSubrange((start + 5)...)
      buffer.append(contentsOf: compressed)
      buffer[start] = 1
    }
    let length = buffer.count - start - 5
    precondition(length <= Int(UInt32.max), "a gRPC message cannot exceed 4 GiB")
    buffer[start + 1] = UInt8(truncatingIfNeeded: length >> 24)
    buffer[start + 2] = UInt8(truncatingIfNeeded: length >> 16)
    buffer[start + 3] = UInt8(truncatingIfNeeded: length >> 8)
    buffer[start + 4] = UInt8(truncatingIfNeeded: length)
  }
}
