/// The gRPC meaning of a server stream's life, as its connection's loop sees it: request
/// headers, checked; the call open while its handler runs; answered once the status is
/// given; closed when nghttp2 is done with the stream. HTTP/2 itself is enforced by nghttp2;
/// this judges gRPC semantics, as ``ClientCallStateMachine`` does for the client.
///
/// Each event returns what the connection must do. An event a state does not expect is a
/// documented no-op (`ignore`): a stream's end races with its handler, its deadline and the
/// client's reset, so an answer may come for a call already answered or closed.
struct ServerCallStateMachine {
  enum State: Equatable {
    /// The request's HEADERS frame has begun.
    case awaitingHeaders
    /// The handler runs; request messages go to it.
    case open(Response)
    /// The status is given (or the call refused): response headers are submitted, and the
    /// rest of the response may still be on its way out; request bytes that still come are
    /// acknowledged and dropped.
    case answered
    /// nghttp2 closed the stream.
    case closed
  }

  /// Whether response headers have been submitted.
  enum Response: Equatable {
    case notStarted
    case started
  }

  /// How the request's messages are encoded and whether gzip responses are welcome (the
  /// path and deadline come with ``OnRequestHeaders/start(path:timeout:)``).
  struct RequestHead {
    var encoding: ClientCallStateMachine.MessageEncoding
    var acceptsGzip: Bool
  }

  enum OnRequestHeaders: Equatable {
    /// A valid call: start its handler.
    case start(path: String, timeout: Duration?)
    /// Answer at once with this status (trailers-only, with this HTTP status) and no handler.
    case refuse(Status, httpStatus: Int)
    /// Not the request's headers (the call is past them).
    case ignore
  }

  enum OnRequestData: Equatable {
    /// For the handler.
    case deliver
    /// Nothing will read it: acknowledge it and let it go.
    case drop
  }

  enum OnResponseQueued: Equatable {
    /// Submit the response headers, with the body to follow.
    case startResponse
    /// The response is under way: resume its body, if nghttp2 deferred it.
    case resumeBody
    /// The stream is closed.
    case ignore
  }

  enum OnFinish: Equatable {
    /// Nothing was sent: status and metadata go in one trailers-only response.
    case trailersOnly
    /// Submit the response headers; the body ends with the status as trailers.
    case startResponse
    /// The body is under way: resume it, to end it with the status.
    case resumeBody
    /// The call was answered or closed already.
    case ignore
  }

  private(set) var state = State.awaitingHeaders
  /// What the request headers said, once they passed.
  private(set) var head: RequestHead?

  /// The call has been answered or closed: what comes for it is dropped.
  var ignoresRequests: Bool {
    switch state {
    case .awaitingHeaders, .open: false
    case .answered, .closed: true
    }
  }

  var isClosed: Bool { state == .closed }

  /// The request's header block. `hasMethod` says whether the server serves a path; the
  /// checks go in the order gRPC servers make them.
  mutating func receiveRequestHeaders(_ fields: [HeaderField], hasMethod: (String) -> Bool)
    -> OnRequestHeaders
  {
    guard state == .awaitingHeaders else { return .ignore }
    var method = "", path = "", contentType = "", timeout: Duration? = nil
    var malformedTimeout: String? = nil
    var encoding = ClientCallStateMachine.MessageEncoding.identity
    var acceptsGzip = false
    for field in fields {
      switch field.name {
      case ":method": method = field.value
      case ":path": path = field.value
      case "content-type": contentType = field.value
      case "grpc-timeout":
        timeout = GRPCTimeout.parse(field.value)
        if timeout == nil { malformedTimeout = field.value }
      case "grpc-encoding": encoding = .init(headerValue: field.value)
      case "grpc-accept-encoding": acceptsGzip = Self.listsGzip(field.value)
      default: continue
      }
    }
    head = RequestHead(encoding: encoding, acceptsGzip: acceptsGzip)
    func refuse(_ code: StatusCode, _ message: String, httpStatus: Int = 200) -> OnRequestHeaders {
      state = .answered
      return .refuse(Status(code: code, message: message), httpStatus: httpStatus)
    }
    guard method == "POST" else {
      return refuse(.unimplemented, "gRPC needs POST, not \(method)", httpStatus: 405)
    }
    guard contentType.hasPrefix("application/grpc") else {
      return refuse(.internalError, "content-type '\(contentType)' is not gRPC", httpStatus: 415)
    }
    if case .unsupported(let name) = encoding {
      return refuse(.unimplemented, "this server does not support grpc-encoding '\(name)'")
    }
    guard hasMethod(path) else { return refuse(.unimplemented, "unknown method \(path)") }
    // PROTOCOL-HTTP2.md: at most 8 digits and one unit. A value we cannot read is not
    // silently dropped (the call would run with no deadline); a zero one has already passed.
    if let malformedTimeout {
      return refuse(.internalError, "malformed grpc-timeout '\(malformedTimeout.prefix(32))'")
    }
    if timeout == .zero {
      return refuse(.deadlineExceeded, "the call's deadline passed before it reached the server")
    }
    state = .open(.notStarted)
    return .start(path: path, timeout: timeout)
  }

  /// Request bytes arrived.
  func receiveRequestData() -> OnRequestData {
    if case .open = state { return .deliver }
    return .drop
  }

  /// Response bytes were queued (the handler wrote a message).
  mutating func responseQueued() -> OnResponseQueued {
    switch state {
    case .open(.notStarted):
      state = .open(.started)
      return .startResponse
    case .open(.started), .answered:
      return .resumeBody
    case .awaitingHeaders, .closed:
      return .ignore
    }
  }

  /// The handler finished, or the call was aborted: the status is given. `bodyQueued`:
  /// response messages wait to be sent.
  mutating func finish(bodyQueued: Bool) -> OnFinish {
    switch state {
    case .open(.notStarted):
      state = .answered
      return bodyQueued ? .startResponse : .trailersOnly
    case .open(.started):
      state = .answered
      return .resumeBody
    case .awaitingHeaders, .answered, .closed:
      return .ignore
    }
  }

  /// nghttp2 closed the stream; true when the call was still open (the client reset it, or
  /// the connection ended), so its handler must stop.
  mutating func streamClosed() -> Bool {
    defer { state = .closed }
    if case .open = state { return true }
    return false
  }

  /// Whether a `grpc-accept-encoding` value (comma-separated names, spaces allowed around
  /// them) lists gzip. Read byte by byte: it is parsed on every call.
  static func listsGzip(_ list: String) -> Bool {
    if list == "identity,gzip" { return true }
    var list = list
    return list.withUTF8 { bytes in
      var start = 0
      while start <= bytes.count {
        var end = start
        while end < bytes.count && bytes[end] != UInt8(ascii: ",") { end += 1 }
        var low = start, high = end
        while low < high && bytes[low] == UInt8(ascii: " ") { low += 1 }
        while high > low && bytes[high - 1] == UInt8(ascii: " ") { high -= 1 }
        if high - low == 4 && bytes[low] == UInt8(ascii: "g") && bytes[low + 1] == UInt8(ascii: "z")
          && bytes[low + 2] == UInt8(ascii: "i") && bytes[low + 3] == UInt8(ascii: "p")
        {
          return true
        }
        start = end + 1
      }
      return false
    }
  }
}

extension ClientCallStateMachine.MessageEncoding {
  /// The encoding a `grpc-encoding` value names.
  init(headerValue: String) {
    switch headerValue {
    case "identity": self = .identity
    case "gzip": self = .gzip
    default: self = .unsupported(headerValue)
    }
  }
}
