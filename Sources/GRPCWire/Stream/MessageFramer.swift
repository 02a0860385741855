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

  /// Throws INTERNAL unless `framed` is one whole message behind its prefix (what ``append``
  /// writes), compressed only when `compressionAllowed`: a request framed by its caller
  /// (``GRPCChannel/unary(path:framedRequest:deserializer:options:)``) is checked before it is
  /// sent, not refused by the server.
  static func check(_ framed: [UInt8], compressionAllowed: Bool) throws(RPCError) {
    guard framed.count >= prefixLength else {
      throw RPCError(
        code: .internalError,
        message: "a framed request needs the 5-byte prefix; it has \(framed.count) bytes")
    }
    let length =
      Int(framed[1]) << 24 | Int(framed[2]) << 16 | Int(framed[3]) << 8 | Int(framed[4])
    guard length == framed.count - prefixLength else {
      throw RPCError(
        code: .internalError,
        message: "a framed request's prefix says \(length) bytes; \(framed.count - prefixLength) "
          + "follow it")
    }
    guard framed[0] == 0 || (framed[0] == 1 && compressionAllowed) else {
      throw RPCError(
        code: .internalError,
        message: framed[0] == 1
          ? "a framed request is compressed, but the call's options name no compression"
          : "a framed request's flag byte is \(framed[0]); gRPC allows 0 and 1")
    }
  }
}
