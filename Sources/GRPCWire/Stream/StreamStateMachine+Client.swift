/// A client's stream: what the response headers and trailers say (a server's response is
/// headers, then messages, then trailers — or one trailers-only block).
extension StreamStateMachine {
  /// What the response headers said.
  struct ResponseHead {
    var metadata: Metadata
    var encoding: MessageEncoding
  }

  enum OnResponseHeaders {
    /// Response headers: the call is open for messages.
    case responseHead(ResponseHead)
    /// Trailers or a trailers-only response: the call is over with this outcome.
    case finished(CallOutcome)
    /// The peer broke gRPC's rules: fail with this and reset the stream.
    case protocolViolation(RPCError)
    /// The call had already ended.
    case ignore
  }

  /// A client's machine, awaiting the response headers.
  static func client() -> Self { Self(role: .client) }

  /// A HEADERS frame's fields on a client; `endStream` when it also ended the stream.
  mutating func receiveResponseHeaders(_ fields: [HeaderField], endStream: Bool)
    -> OnResponseHeaders
  {
    assert(role == .client, "response headers on a server's stream")
    switch state {
    case .awaitingHead:
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
        var error = RPCError(
          code: .unknown,
          message: "the server's response is not gRPC: content-type is "
            + (parsed.contentType.map { "'\($0)'" } ?? "missing"),
          metadata: parsed.metadata)
        error.isFromServer = true
        return .protocolViolation(error)
      }
      state = .open(Open(encoding: parsed.encoding, headersSent: true))
      return .responseHead(ResponseHead(metadata: parsed.metadata, encoding: parsed.encoding))
    case .open:
      state = .closed
      guard endStream else {
        return .protocolViolation(
          RPCError(
            code: .internalError,
            message: "the server sent a second HEADERS block that does not end the stream"))
      }
      return .finished(ParsedHeaders(fields).outcome(trailersOnly: false))
    case .answered, .closed:
      return .ignore
    }
  }
}

/// The gRPC-relevant parts of one header block.
private struct ParsedHeaders {
  let httpStatus: Int?
  let contentType: String?
  let encoding: StreamStateMachine.MessageEncoding
  let grpcStatus: String?
  let grpcMessage: String?
  let statusDetails: String?
  let retryPushback: String?
  let metadata: Metadata

  init(_ fields: [HeaderField]) {
    // Read into locals and moved in at the end: assigned to `self`'s fields in the loop, the
    // whole struct was copied once it was complete (a retain and a release of each of its
    // strings and its metadata: 12 of each per call).
    var httpStatus: Int? = nil
    var contentType: String? = nil
    var encoding = StreamStateMachine.MessageEncoding.identity
    var grpcStatus: String? = nil
    var grpcMessage: String? = nil
    var statusDetails: String? = nil
    var retryPushback: String? = nil
    // Most blocks carry gRPC's own fields only: metadata is built when some field may be one.
    var mayCarryMetadata = false
    for field in fields {
      let name = field.name
      // By the name's length first: every response passes here twice, and a switch over the
      // names compared each field with one name after another (1.5 % of fleet-load's CPU).
      switch name.utf8.count {
      case 7 where name == ":status":
        httpStatus = field.value == "200" ? 200 : Int(field.value)
      case 11 where name == "grpc-status": grpcStatus = field.value
      case 12 where name == "content-type": contentType = field.value
      case 12 where name == "grpc-message": grpcMessage = field.value
      case 13 where name == "grpc-encoding": encoding = .init(headerValue: field.value)
      case 22 where name == "grpc-retry-pushback-ms": retryPushback = field.value
      case 23 where name == "grpc-status-details-bin": statusDetails = field.value
      default:
        if !mayCarryMetadata, !Metadata.isReserved(name) { mayCarryMetadata = true }
      }
    }
    self.httpStatus = httpStatus
    self.contentType = contentType
    self.encoding = encoding
    self.grpcStatus = grpcStatus
    self.grpcMessage = grpcMessage
    self.statusDetails = statusDetails
    self.retryPushback = retryPushback
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
      var error = RPCError(
        code: .unknown,
        message: trailersOnly
          ? "the server ended the call without a grpc-status"
          : "the server's trailers have no grpc-status",
        metadata: metadata)
      error.isFromServer = true
      return .failure(error)
    }
    if let (code, original) = StatusCode.parse(grpcStatus: grpcStatus), code == .ok, original == 0 {
      return .success(metadata)
    }
    var error = RPCError(
      grpcStatus: grpcStatus, grpcMessage: grpcMessage, grpcStatusDetailsBin: statusDetails,
      metadata: metadata)
    error.retryPushback = retryPushback.map(RetryPushback.init(headerValue:))
    return .failure(error)
  }
}
