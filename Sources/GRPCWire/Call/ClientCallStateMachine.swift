/// The gRPC meaning of what arrives on a client stream: response headers, then messages, then
/// trailers — or a trailers-only response. HTTP/2 itself is enforced by nghttp2; this only
/// judges gRPC semantics.
///
/// Unexpected events mean one of two things, said per event: the peer violated gRPC (the call
/// fails with a status and the stream is reset), or a documented no-op (events after the call
/// has closed, which races with local cancellation make normal).
struct ClientCallStateMachine {
  private enum State {
    case awaitingHeaders
    case receiving(ResponseHead)
    case closed
  }

  /// What the response headers said.
  struct ResponseHead {
    var metadata: Metadata
    var encoding: MessageEncoding
  }

  /// How the server's messages are compressed (`grpc-encoding`).
  enum MessageEncoding: Equatable {
    case identity
    case gzip
    case unsupported(String)
  }

  enum OnHeaders {
    /// Response headers: the call is open for messages.
    case responseHead(ResponseHead)
    /// Trailers or a trailers-only response: the call is over with this outcome.
    case finished(CallOutcome)
    /// The peer broke gRPC's rules: fail with this and reset the stream.
    case protocolViolation(RPCError)
    /// The call had already ended.
    case ignore
  }

  enum OnData {
    case accept(MessageEncoding)
    case protocolViolation(RPCError)
    case ignore
  }

  private var state = State.awaitingHeaders

  var isClosed: Bool {
    if case .closed = state { return true }
    return false
  }

  /// A HEADERS frame's fields; `endStream` when it also ended the stream.
  mutating func receiveHeaders(_ fields: [HeaderField], endStream: Bool) -> OnHeaders {
    switch state {
    case .awaitingHeaders:
      let parsed = ParsedHeaders(fields)
      if endStream {
        // Trailers-only: status and metadata share this one block.
        state = .closed
        return .finished(parsed.outcome(trailersOnly: true))
      }
      guard parsed.httpStatus == 200 else {
        state = .closed
        return .protocolViolation(parsed.httpFailure())
      }
      guard parsed.isGRPCContentType else {
        state = .closed
        return .protocolViolation(
          RPCError(
            code: .unknown,
            message: "the server's response is not gRPC: content-type is "
              + (parsed.contentType.map { "'\($0)'" } ?? "missing"),
            metadata: parsed.metadata))
      }
      let head = ResponseHead(metadata: parsed.metadata, encoding: parsed.encoding)
      state = .receiving(head)
      return .responseHead(head)
    case .receiving:
      state = .closed
      guard endStream else {
        return .protocolViolation(
          RPCError(
            code: .internalError,
            message: "the server sent a second HEADERS block that does not end the stream"))
      }
      return .finished(ParsedHeaders(fields).outcome(trailersOnly: false))
    case .closed:
      return .ignore
    }
  }

  /// DATA arrived; it may only follow response headers.
  mutating func receiveData() -> OnData {
    switch state {
    case .awaitingHeaders:
      state = .closed
      return .protocolViolation(
        RPCError(code: .internalError, message: "the server sent DATA before response headers"))
    case .receiving(let head):
      return .accept(head.encoding)
    case .closed:
      return .ignore
    }
  }

  /// The stream ended without trailers (reset, or closed with END_STREAM on DATA). Returns the
  /// failure to report, or nil when the call had already ended.
  mutating func streamClosedWithoutTrailers(http2ErrorCode: UInt32) -> RPCError? {
    switch state {
    case .awaitingHeaders, .receiving:
      state = .closed
      if http2ErrorCode == 0 {
        return RPCError(
          code: .internalError, message: "the server ended the stream without sending trailers")
      }
      return HTTP2ErrorCode.rpcError(forReset: http2ErrorCode)
    case .closed:
      return nil
    }
  }

  /// The call ends locally (cancellation, deadline, a local error).
  mutating func close() {
    state = .closed
  }
}

/// One header field as nghttp2 delivered it (names are lowercase, as HTTP/2 requires).
struct HeaderField {
  var name: String
  var value: String
}

/// How a call ended: OK with its trailers, or an error carrying them.
typealias CallOutcome = Result<Metadata, RPCError>

/// The gRPC-relevant parts of one header block.
private struct ParsedHeaders {
  var httpStatus: Int?
  var contentType: String?
  var encoding = ClientCallStateMachine.MessageEncoding.identity
  var grpcStatus: String?
  var grpcMessage: String?
  var statusDetails: String?
  var metadata: Metadata

  init(_ fields: [HeaderField]) {
    // Most blocks carry gRPC's own fields only: metadata is built when some field may be one.
    var mayCarryMetadata = false
    for field in fields {
      switch field.name {
      case ":status": httpStatus = Int(field.value)
      case "content-type": contentType = field.value
      case "grpc-status": grpcStatus = field.value
      case "grpc-message": grpcMessage = field.value
      case "grpc-status-details-bin": statusDetails = field.value
      case "grpc-encoding": encoding = .init(headerValue: field.value)
      default:
        if !mayCarryMetadata, !Metadata.isReserved(field.name) { mayCarryMetadata = true }
      }
    }
    metadata =
      mayCarryMetadata
      ? Metadata(receivedHeaders: fields.lazy.map { (name: $0.name, value: $0.value) })
      : Metadata()
  }

  /// application/grpc, optionally followed by +format or ;parameters (PROTOCOL-HTTP2.md).
  var isGRPCContentType: Bool {
    // On bytes: every response passes here, and Character-wise prefix checks cost more than
    // the rest of the header block's parsing.
    guard let contentType else { return false }
    // The usual value is the shared string (HeaderField+Received): equal at once.
    if contentType == "application/grpc" { return true }
    let utf8 = contentType.utf8
    guard utf8.starts(with: "application/grpc".utf8) else {
      return false
    }
    let rest = utf8.dropFirst(16)
    return rest.isEmpty || rest.first == UInt8(ascii: "+") || rest.first == UInt8(ascii: ";")
  }

  func httpFailure() -> RPCError {
    let status = httpStatus ?? 0
    return RPCError.fromHTTP(
      status: status, message: contentType.map { "content-type '\($0)'" } ?? "",
      metadata: metadata)
  }

  func outcome(trailersOnly: Bool) -> CallOutcome {
    guard let grpcStatus else {
      // No grpc-status: only here does the HTTP status decide (http-grpc-status-mapping.md).
      if trailersOnly, let httpStatus, httpStatus != 200 { return .failure(httpFailure()) }
      return .failure(
        RPCError(
          code: .unknown,
          message: trailersOnly
            ? "the server ended the call without a grpc-status"
            : "the server's trailers have no grpc-status",
          metadata: metadata))
    }
    if let (code, original) = StatusCode.parse(grpcStatus: grpcStatus), code == .ok, original == 0 {
      return .success(metadata)
    }
    return .failure(
      RPCError(
        grpcStatus: grpcStatus, grpcMessage: grpcMessage, grpcStatusDetailsBin: statusDetails,
        metadata: metadata))
  }
}

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
