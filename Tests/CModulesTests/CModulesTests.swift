import CNGHTTP2
import COpenSSL
import CProtobufC
import CZlib
import Testing

/// The system-library targets find their Debian packages' headers and libraries: each test
/// calls into the library and checks the version is one the package is written for.
@Suite("C libraries")
struct CModulesTests {
  @Test("nghttp2 links and is 1.52 or newer (mem_recv/mem_send era)")
  func nghttp2() throws {
    let info = try #require(nghttp2_version(0))
    #expect(info.pointee.version_num >= 0x01_34_00)
  }

  @Test("protobuf-c links and is 1.4 or newer")
  func protobufC() {
    #expect(protobuf_c_version_number() >= 1_004_000)
  }

  @Test("OpenSSL links and is 3.x with TLS 1.2+ and ALPN")
  func openSSL() {
    #expect(OpenSSL_version_num() >= 0x3000_0000)
    let context = SSL_CTX_new(TLS_client_method())
    defer { SSL_CTX_free(context) }
    #expect(context != nil)
    let h2: [UInt8] = [2, 0x68, 0x32]
    // SSL_CTX_set_alpn_protos returns 0 on success.
    #expect(SSL_CTX_set_alpn_protos(context, h2, UInt32(h2.count)) == 0)
  }

  @Test("zlib links and round-trips a gzip stream")
  func zlib() throws {
    let input = Array("gRPC messages compress with gzip".utf8)
    var output = [UInt8](repeating: 0, count: 256)
    var stream = z_stream()
    // 15 + 16: zlib's way of asking for a gzip header instead of a zlib one.
    #expect(deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
    var compressed = 0
    input.withUnsafeBufferPointer { src in
      output.withUnsafeMutableBufferPointer { dst in
        stream.next_in = UnsafeMutablePointer(mutating: src.baseAddress)
        stream.avail_in = UInt32(src.count)
        stream.next_out = dst.baseAddress
        stream.avail_out = UInt32(dst.count)
        #expect(deflate(&stream, Z_FINISH) == Z_STREAM_END)
        compressed = dst.count - Int(stream.avail_out)
      }
    }
    deflateEnd(&stream)
    #expect(output[0] == 0x1F && output[1] == 0x8B)  // gzip magic
    var back = [UInt8](repeating: 0, count: 256)
    var inflater = z_stream()
    #expect(inflateInit2_(&inflater, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
    output.withUnsafeMutableBufferPointer { src in
      back.withUnsafeMutableBufferPointer { dst in
        inflater.next_in = src.baseAddress
        inflater.avail_in = UInt32(compressed)
        inflater.next_out = dst.baseAddress
        inflater.avail_out = UInt32(dst.count)
        #expect(inflate(&inflater, Z_FINISH) == Z_STREAM_END)
      }
    }
    inflateEnd(&inflater)
    #expect(Array(back[..<input.count]) == input)
  }
}
