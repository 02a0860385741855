internal import CZlib

/// gzip, the one message compression we speak besides identity (`grpc-encoding: gzip`).
enum Gzip {
  /// Why a compressed message could not be inflated.
  enum InflateError: Error, Equatable {
    /// The data is not a complete gzip stream.
    case corrupt(String)
    /// It inflates to more than the caller's limit (a "zip bomb" or just too large).
    case tooLarge(limit: Int)
  }

  static func compress(_ input: [UInt8]) -> [UInt8] {
    var stream = z_stream()
    // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
    let initResult = deflateInit2_(
      &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
      Int32(MemoryLayout<z_stream>.size))
    precondition(initResult == Z_OK, "deflateInit2 failed (\(initResult)): out of memory")
    defer { deflateEnd(&stream) }
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 32)
    let written = input.withUnsafeBufferPointer { src in
      output.withUnsafeMutableBufferPointer { dst in
        stream.next_in = UnsafeMutablePointer(mutating: src.baseAddress)
        stream.avail_in = UInt32(src.count)
        stream.next_out = dst.baseAddress
        stream.avail_out = UInt32(dst.count)
        // deflateBound promises room for everything, so one Z_FINISH call ends the stream.
        let result = deflate(&stream, Z_FINISH)
        precondition(result == Z_STREAM_END, "deflate did not finish within deflateBound")
        return dst.count - Int(stream.avail_out)
      }
    }
    output.removeSubrange(written...)
    return output
  }

  static func decompress(_ input: [UInt8], limit: Int) throws(InflateError) -> [UInt8] {
    var stream = z_stream()
    let initResult = inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
    precondition(initResult == Z_OK, "inflateInit2 failed (\(initResult)): out of memory")
    defer { inflateEnd(&stream) }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: min(max(input.count * 4, 4096), 1 << 20))
    var result: Int32 = Z_OK
    let outcome: InflateError? = input.withUnsafeBufferPointer { src in
      stream.next_in = UnsafeMutablePointer(mutating: src.baseAddress)
      stream.avail_in = UInt32(src.count)
      while true {
        let produced = chunk.withUnsafeMutableBufferPointer { dst in
          stream.next_out = dst.baseAddress
          stream.avail_out = UInt32(dst.count)
          result = inflate(&stream, Z_NO_FLUSH)
          return dst.count - Int(stream.avail_out)
        }
        if output.count + produced > limit { return .tooLarge(limit: limit) }
        output.append(contentsOf: chunk[..<produced])
        switch result {
        case Z_STREAM_END:
          return stream.avail_in == 0 ? nil : .corrupt("data follows the end of the gzip stream")
        case Z_OK:
          continue
        case Z_BUF_ERROR:
          // No progress possible: the input ended before the stream did.
          return .corrupt("the gzip stream is truncated")
        default:
          let reason = stream.msg.map { String(cString: $0) } ?? "zlib error \(result)"
          return .corrupt(reason)
        }
      }
    }
    if let outcome { throw outcome }
    return output
  }
}
