/// The response (on the loop), submitted through the stream's session: headers with the body
/// nghttp2 pulls from the stream's queue, then the trailers; or a trailers-only answer for a
/// call refused, or finished without a body.
extension ServerStream {
  /// Whether response messages are compressed: the client accepts gzip and the handler asked.
  var compressionAllowed: Bool {
    acceptsGzip && (context?.compressResponses ?? false)
  }

  /// The handler queued response bytes (the mailbox claimed this hop): the response starts,
  /// or its body resumes.
  func responseBytesQueued() {
    loop.checkInLoop()
    withLocked { mailbox.resumeHopRan() }
    guard session?.nghttp2 != nil else { return }
    switch machine.responseQueued() {
    case .startResponse: startResponse()
    case .resumeBody: resumeBody()
    case .ignore: break
    }
  }

  /// The handler finished (or the call was aborted): status and trailers follow the body, or
  /// make the whole answer when nothing was sent.
  func finishResponse() {
    loop.checkInLoop()
    guard session?.nghttp2 != nil else { return }
    cancelDeadline()
    let unsent = machine.awaitsResponseStart ? finishedWithoutBody : nil
    switch machine.finish(bodyQueued: unsent == nil) {
    case .trailersOnly:
      guard let (status, trailers) = unsent else { return }
      // Nothing was sent: a trailers-only response carries status and metadata together.
      var metadata = context?.initialMetadata ?? Metadata()
      metadata.add(contentsOf: trailers)
      respondEarly(status, metadata: metadata)
    case .startResponse: startResponse()
    case .resumeBody: resumeBody()
    case .ignore: break
    }
  }

  /// A request broke the rules: answers with `error`'s status and stops the handler.
  func fail(_ error: RPCError) {
    abort(error)
    finishResponse()
  }

  /// Answers at once with `status`, trailers-only: for a call refused before any handler
  /// (`metadata` nil; `httpStatus` for a request that is not gRPC), or one that ended before
  /// its first message (with its initial and trailing `metadata`).
  func respondEarly(_ status: Status, httpStatus: Int = 200, metadata: Metadata? = nil) {
    var fields = [
      HeaderField(name: ":status", value: "\(httpStatus)"),
      HeaderField(name: "content-type", value: "application/grpc"),
    ]
    if metadata == nil {
      // compression.md: an UNIMPLEMENTED for an unknown grpc-encoding says what we accept.
      fields.append(HeaderField(name: "grpc-accept-encoding", value: "identity,gzip"))
    }
    fields.append(pairs: status.headerFields())
    if let metadata { fields.append(pairs: metadata.headerFields()) }
    session?.submitResponse(id, fields, body: nil)
  }

  /// The response headers, with the body nghttp2 pulls from the queue after them.
  private func startResponse() {
    var fields = [
      HeaderField(name: ":status", value: "200"),
      HeaderField(name: "content-type", value: "application/grpc"),
      HeaderField(name: "grpc-accept-encoding", value: "identity,gzip"),
    ]
    if acceptsGzip { fields.append(HeaderField(name: "grpc-encoding", value: "gzip")) }
    fields.append(pairs: (context?.initialMetadata ?? Metadata()).headerFields())
    session?.submitResponse(id, fields, body: self)
  }

  /// Resumes the response body, if nghttp2 deferred it for want of bytes.
  private func resumeBody() {
    guard bodyDeferred, let session else { return }
    session.checkSubmitted(session.resumeBody(of: id, deferred: &bodyDeferred), id)
  }

  /// The body is over (from the data provider, inside mem_send): the status and trailers.
  func submitTrailers(status: Status, trailers: Metadata) {
    var fields: [HeaderField] = []
    fields.append(pairs: status.headerFields())
    fields.append(pairs: trailers.headerFields())
    session?.submitTrailers(id, fields)
  }
}

extension [HeaderField] {
  /// Appends `Status` or `Metadata` header fields in place, without a mapped array between.
  fileprivate mutating func append(pairs: [(name: String, value: String)]) {
    for pair in pairs { append(HeaderField(name: pair.name, value: pair.value)) }
  }
}
