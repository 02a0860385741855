extension RPCError {
  /// The error for a call whose connection dropped while it was in flight (socket closed or
  /// reset, GOAWAY for a stream the server had already accepted, TLS failure mid-stream).
  ///
  /// UNAVAILABLE, as gRPC's doc/statuscodes.md prescribes when "some data [was] transmitted
  /// before connection breaks", with ``isInterrupted`` set so it can be told apart from a
  /// server that said UNAVAILABLE. `message` says what happened, e.g. "the peer reset the
  /// connection"; the error's message puts it after "connection interrupted during the call".
  package static func interrupted(_ message: String, cause: (any Error & Sendable)? = nil)
    -> RPCError
  {
    var error = RPCError(
      code: .unavailable,
      message: message.isEmpty
        ? "connection interrupted during the call"
        : "connection interrupted during the call: \(message)",
      cause: cause)
    error.isInterrupted = true
    return error
  }

  /// The error for a response that is not gRPC: HTTP status `httpStatus` without `grpc-status`.
  ///
  /// The code comes from gRPC's HTTP-to-gRPC mapping (``StatusCode/init(httpStatus:)``) and
  /// ``httpStatus`` keeps the original. `message` adds what else is known (the content type,
  /// the start of the body); the error's message always names the HTTP status. `metadata` is
  /// what the response's headers carried.
  package static func fromHTTP(status httpStatus: Int, message: String, metadata: Metadata)
    -> RPCError
  {
    let summary = "the server answered HTTP \(httpStatus) without a gRPC status"
    var error = RPCError(
      code: StatusCode(httpStatus: httpStatus),
      message: message.isEmpty ? summary : "\(summary): \(message)",
      metadata: metadata)
    error.httpStatus = httpStatus
    error.isFromServer = true
    return error
  }

  /// The error for a call whose metadata cannot be sent (see ``Metadata/validate()``).
  ///
  /// INTERNAL, the code gRPC libraries use for a call they cannot put on the wire; nothing was
  /// sent. The message names the key, never the value; `cause` is `problem`.
  package static func invalidMetadata(_ problem: MetadataError) -> RPCError {
    RPCError(
      code: .internalError, message: "the call was not sent: \(problem)", cause: problem)
  }
}

extension RPCError {
  /// `error` as an ``RPCError``: itself, CANCELLED for a task's cancellation, else UNKNOWN
  /// with the error as its cause (what code an interceptor threw, say).
  static func local(_ error: any Error) -> RPCError {
    switch error {
    case let error as RPCError: error
    case is CancellationError: RPCError(code: .cancelled, message: "the call's task was cancelled")
    default: RPCError(code: .unknown, message: "\(error)", cause: error)
    }
  }
}

extension RPCError {
  /// The error for a request message of `size` bytes over the call's `limit`
  /// (``CallOptions/maxSendMessageSize`` or the service config's `maxRequestMessageBytes`):
  /// RESOURCE_EXHAUSTED, as in gRPC's C-core, before the message is sent.
  static func requestTooLarge(_ size: Int, _ limit: Int) -> RPCError {
    RPCError(
      code: .resourceExhausted,
      message: "a request message of \(size) bytes is over the limit of \(limit) bytes")
  }
}
