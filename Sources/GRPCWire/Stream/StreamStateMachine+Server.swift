/// A server's stream: the request headers, checked in gRPC's order, and the response — its
/// headers sent lazily, with the first message or with the status, so that a call that fails
/// before answering becomes a trailers-only response, as gRPC servers send.
extension StreamStateMachine {
  /// How the request's messages are encoded and whether gzip responses are welcome (it comes
  /// with ``OnRequestHeaders/start(path:head:timeout:)``, with the path and deadline).
  struct RequestHead: Equatable {
    var encoding: MessageEncoding
    var acceptsGzip: Bool
  }

  enum OnRequestHeaders: Equatable {
    /// A valid call: start its handler.
    case start(path: String, head: RequestHead, timeout: Duration?)
    /// Answer at once with this status (trailers-only, with this HTTP status) and no handler.
    case refuse(Status, httpStatus: Int)
    /// Not the request's headers (the call is past them).
    case ignore
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

  /// A server's machine, its request's HEADERS frame begun.
  static func server() -> Self { Self(role: .server) }

  /// The call has been answered or closed: what comes for it is dropped.
  var ignoresRequests: Bool {
    switch state {
    case .awaitingHead, .open: false
    case .answered, .closed: true
    }
  }

  /// The call is open and its response headers have not gone out.
  var awaitsResponseStart: Bool {
    if case .open(let open) = state { return !open.headersSent }
    return false
  }

  /// The request's header block. `hasMethod` says whether the server serves a path; the
  /// checks go in the order gRPC servers make them.
  mutating func receiveRequestHeaders(_ fields: [HeaderField], hasMethod: (String) -> Bool)
    -> OnRequestHeaders
  {
    assert(role == .server, "request headers on a client's stream")
    guard state == .awaitingHead else { return .ignore }
    var method = "", path = "", contentType = "", timeout: Duration? = nil
    var malformedTimeout: String? = nil
    var encoding = MessageEncoding.identity
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
    state = .open(Open(encoding: encoding, headersSent: false))
    let head = RequestHead(encoding: encoding, acceptsGzip: acceptsGzip)
    return .start(path: path, head: head, timeout: timeout)
  }

  /// Response bytes were queued (the handler wrote a message).
  mutating func responseQueued() -> OnResponseQueued {
    assert(role == .server, "a response on a client's stream")
    switch state {
    case .open(var open) where !open.headersSent:
      open.headersSent = true
      state = .open(open)
      return .startResponse
    case .open, .answered:
      return .resumeBody
    case .awaitingHead, .closed:
      return .ignore
    }
  }

  /// The handler finished, or the call was aborted: the status is given. `bodyQueued`:
  /// response messages wait to be sent.
  mutating func finish(bodyQueued: Bool) -> OnFinish {
    assert(role == .server, "a status on a client's stream")
    switch state {
    case .open(let open):
      state = .answered
      if open.headersSent { return .resumeBody }
      return bodyQueued ? .startResponse : .trailersOnly
    case .awaitingHead, .answered, .closed:
      return .ignore
    }
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
