/// HTTP/2 error codes (RFC 9113 §7) as gRPC statuses (PROTOCOL-HTTP2.md, "Errors").
enum HTTP2ErrorCode {
  static let noError: UInt32 = 0x0
  static let internalError: UInt32 = 0x2
  static let refusedStream: UInt32 = 0x7
  static let cancel: UInt32 = 0x8
  static let enhanceYourCalm: UInt32 = 0xB

  static func rpcError(forReset code: UInt32) -> RPCError {
    let (status, name): (StatusCode, String) =
      switch code {
      case 0x0: (.internalError, "NO_ERROR")
      case 0x1: (.internalError, "PROTOCOL_ERROR")
      case 0x2: (.internalError, "INTERNAL_ERROR")
      case 0x3: (.internalError, "FLOW_CONTROL_ERROR")
      case 0x4: (.internalError, "SETTINGS_TIMEOUT")
      case 0x5: (.internalError, "STREAM_CLOSED")
      case 0x6: (.internalError, "FRAME_SIZE_ERROR")
      case 0x7: (.unavailable, "REFUSED_STREAM")
      case 0x8: (.cancelled, "CANCEL")
      case 0x9: (.internalError, "COMPRESSION_ERROR")
      case 0xA: (.internalError, "CONNECT_ERROR")
      case 0xB: (.resourceExhausted, "ENHANCE_YOUR_CALM")
      case 0xC: (.permissionDenied, "INADEQUATE_SECURITY")
      case 0xD: (.internalError, "HTTP_1_1_REQUIRED")
      default: (.internalError, "error code \(code)")
      }
    return RPCError(code: status, message: "the server reset the stream with \(name)")
  }
}
