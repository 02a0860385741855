/// The gRPC meaning of one HTTP/2 stream's life, for either role: the peer's head (response
/// headers on a client, request headers on a server), the messages that follow it, and the
/// end — trailers, a status, a reset. HTTP/2 itself is enforced by nghttp2; this judges gRPC
/// semantics only. A value on its stream's loop: each event returns what the stream's owner
/// must do, and the owner does it.
///
/// The two roles share the states and the events of the stream's body and end (DATA, the
/// stream closing, a local end); the head is read by role: ``receiveResponseHeaders(_:endStream:)``
/// on a client (`StreamStateMachine+Client.swift`), ``receiveRequestHeaders(_:hasMethod:)``
/// on a server, which also tracks its response (`StreamStateMachine+Server.swift`).
///
/// Unexpected events are one of three things, said per event: the peer broke gRPC's rules
/// (the call fails with a status and the stream is reset); a documented no-op (a stream's
/// end races with local cancellation, its deadline and the peer's reset, so events may come
/// for a call already over); or an event of the other role, which is our bug (asserted in
/// debug builds, ignored otherwise).
struct StreamStateMachine {
  /// Which end of the call this stream is.
  enum Role: Equatable {
    case client
    case server
  }

  enum State: Equatable {
    /// The peer's head has not arrived (a server's request HEADERS frame has begun).
    case awaitingHead
    /// The peer's head passed: its messages are read, compressed as `Open.encoding` says.
    case open(Open)
    /// A server's call has its status (or was refused): the response headers are submitted
    /// and the rest of the response may still be on its way out; request bytes that still
    /// come are acknowledged and dropped. A client never gets here.
    case answered
    /// Over: trailers came, the stream closed, or the call ended locally.
    case closed
  }

  /// The call between the peer's head and its end.
  struct Open: Equatable {
    /// How the peer's messages are compressed (`grpc-encoding`).
    var encoding: MessageEncoding
    /// Whether our headers are out: a client's went with the request; a server's go with
    /// its first message or its status.
    var headersSent: Bool
  }

  /// How a peer's messages are compressed (`grpc-encoding`).
  enum MessageEncoding: Equatable {
    case identity
    case gzip
    case unsupported(String)
  }

  enum OnData: Equatable {
    /// Messages of the call: deframe them, decompressing as this says.
    case accept(MessageEncoding)
    /// The peer broke gRPC's rules: fail with this and reset the stream.
    case protocolViolation(RPCError)
    /// Nothing will read it (the call is over, or answered): acknowledge it and let it go.
    case drop
  }

  let role: Role
  /// Set only by the events, here and in the role files (an extension in another file
  /// cannot reach a `private(set)` setter); the owner reads it.
  var state = State.awaitingHead

  init(role: Role) {
    self.role = role
  }

  var isClosed: Bool { state == .closed }

  /// DATA arrived. A client's may only follow response headers; a server's, which nghttp2
  /// lets through only after the request's HEADERS, is read while the call is open.
  mutating func receiveData() -> OnData {
    switch state {
    case .awaitingHead:
      guard role == .client else { return .drop }
      state = .closed
      return .protocolViolation(
        RPCError(code: .internalError, message: "the server sent DATA before response headers"))
    case .open(let open):
      return .accept(open.encoding)
    case .answered, .closed:
      return .drop
    }
  }

  /// nghttp2 closed the stream. When the call was still open, returns the error it ends
  /// with: on a client, the stream ended without trailers (reset, or END_STREAM on DATA);
  /// on a server, the client reset it before it was answered, and its handler must stop.
  /// Nil when the call was already over (or, on a server, answered).
  mutating func streamClosed(http2ErrorCode: UInt32) -> RPCError? {
    defer { state = .closed }
    switch (role, state) {
    case (.client, .awaitingHead), (.client, .open):
      if http2ErrorCode == HTTP2ErrorCode.noError {
        return RPCError(
          code: .internalError, message: "the server ended the stream without sending trailers")
      }
      return HTTP2ErrorCode.rpcError(forReset: http2ErrorCode)
    case (.server, .open):
      return RPCError(code: .cancelled, message: "the client cancelled the call")
    case (.server, .awaitingHead), (_, .answered), (_, .closed):
      return nil
    }
  }

  /// The call ends locally (a client's cancellation, deadline or local error).
  mutating func close() {
    state = .closed
  }
}

/// How a client's call ended: OK with its trailers, or an error carrying them.
typealias CallOutcome = Result<Metadata, RPCError>

extension StreamStateMachine.MessageEncoding {
  /// The encoding a `grpc-encoding` value names.
  init(headerValue: String) {
    switch headerValue {
    case "identity": self = .identity
    case "gzip": self = .gzip
    default: self = .unsupported(headerValue)
    }
  }
}
