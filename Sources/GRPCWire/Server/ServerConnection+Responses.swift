internal import CNGHTTP2
internal import Logging

/// Responses (on the loop): headers, the body nghttp2 pulls from the stream's queue, and the
/// trailers; trailers-only answers for calls refused or finished without a body.
extension ServerConnection {
  /// A request broke the rules: answer with `error`'s status and stop the handler.
  func fail(_ stream: ServerStream, _ error: RPCError) {
    stream.abort(error)
    finishResponse(of: stream)
  }

  /// Answers at once with `status` and no handler (trailers-only).
  func respondEarly(_ stream: ServerStream, _ status: Status, httpStatus: Int = 200) {
    var fields = [
      HeaderField(name: ":status", value: "\(httpStatus)"),
      HeaderField(name: "content-type", value: "application/grpc"),
      // compression.md: an UNIMPLEMENTED for an unknown grpc-encoding says what we accept.
      HeaderField(name: "grpc-accept-encoding", value: "identity,gzip"),
    ]
    fields.append(pairs: status.headerFields())
    let submitted = HeaderBlock.withNameValues(fields) { nva, count in
      nghttp2_submit_response(session.nghttp2, stream.id, nva, count, nil)
    }
    checkSubmitted(submitted, stream)
  }

  func compressionAllowed(for stream: ServerStream) -> Bool {
    stream.acceptsGzip && (stream.context?.compressResponses ?? false)
  }

  func responseBytesQueued(for stream: ServerStream) {
    loop.checkInLoop()
    guard session.nghttp2 != nil else { return }
    switch stream.core.machine.responseQueued() {
    case .startResponse: startResponse(stream)
    case .resumeBody: resumeBody(of: stream)
    case .ignore: break
    }
  }

  /// Resumes the response body, if nghttp2 deferred it for want of bytes.
  private func resumeBody(of stream: ServerStream) {
    guard stream.core.bodyDeferred else { return }
    checkSubmitted(session.resumeBody(of: stream.id, deferred: &stream.core.bodyDeferred), stream)
  }

  /// The handler finished (or the call was aborted): status and trailers follow the body.
  func finishResponse(of stream: ServerStream) {
    loop.checkInLoop()
    guard session.nghttp2 != nil else { return }
    stream.cancelDeadline()
    let unsent = stream.core.machine.awaitsResponseStart ? stream.finishedWithoutBody : nil
    switch stream.core.machine.finish(bodyQueued: unsent == nil) {
    case .trailersOnly:
      guard let (status, trailers) = unsent else { return }
      // Nothing was sent: a trailers-only response carries status and metadata together.
      var metadata = stream.context?.initialMetadata ?? Metadata()
      metadata.add(contentsOf: trailers)
      respondEarly(stream, status, metadata: metadata)
    case .startResponse: startResponse(stream)
    case .resumeBody: resumeBody(of: stream)
    case .ignore: break
    }
  }

  func respondEarly(_ stream: ServerStream, _ status: Status, metadata: Metadata) {
    var fields = [
      HeaderField(name: ":status", value: "200"),
      HeaderField(name: "content-type", value: "application/grpc"),
    ]
    fields.append(pairs: status.headerFields())
    fields.append(pairs: metadata.headerFields())
    let submitted = HeaderBlock.withNameValues(fields) { nva, count in
      nghttp2_submit_response(session.nghttp2, stream.id, nva, count, nil)
    }
    checkSubmitted(submitted, stream)
  }

  func startResponse(_ stream: ServerStream) {
    pingStrikes = 0
    var fields = [
      HeaderField(name: ":status", value: "200"),
      HeaderField(name: "content-type", value: "application/grpc"),
      HeaderField(name: "grpc-accept-encoding", value: "identity,gzip"),
    ]
    if stream.acceptsGzip { fields.append(HeaderField(name: "grpc-encoding", value: "gzip")) }
    fields.append(pairs: (stream.context?.initialMetadata ?? Metadata()).headerFields())
    var provider = HTTP2Session.bodyProvider(for: stream)
    let submitted = HeaderBlock.withNameValues(fields) { nva, count in
      nghttp2_submit_response(session.nghttp2, stream.id, nva, count, &provider)
    }
    checkSubmitted(submitted, stream)
  }

  /// The response body, through the one data provider: what the stream's queue holds, and
  /// once the handler is done and the queue empty, the trailers (the body ends without
  /// END_STREAM: ``HTTP2Session/bodyProvider(for:)``).
  func pullBody(
    of source: UnsafeMutableRawPointer, into buffer: UnsafeMutableRawBufferPointer,
    resume: inout [CheckedContinuation<Void, any Error>]
  ) -> BodyPull {
    let stream = Unmanaged<ServerStream>.fromOpaque(source).takeUnretainedValue()
    let (pull, end) = stream.pullBody(into: buffer, resume: &resume)
    guard case .bytes(let count, _) = pull else { return pull }
    if count > 0 { responseDataSent() }
    if let (status, trailers) = end {
      submitTrailers(for: stream, status: status, trailers: trailers)
    }
    return pull
  }

  /// Called from the data provider once the body is over: the trailers.
  func submitTrailers(for stream: ServerStream, status: Status, trailers: Metadata) {
    var fields: [HeaderField] = []
    fields.append(pairs: status.headerFields())
    fields.append(pairs: trailers.headerFields())
    let submitted = HeaderBlock.withNameValues(fields) { nva, count in
      nghttp2_submit_trailer(session.nghttp2, stream.id, nva, count)
    }
    checkSubmitted(submitted, stream)
  }

  /// A response part nghttp2 refused (out of memory, or fields it will not send): the call
  /// cannot be answered as it is, so it is reset with INTERNAL_ERROR; if even that fails,
  /// the connection goes.
  func checkSubmitted(_ result: Int32, _ stream: ServerStream) {
    scheduleFlush()
    guard result != 0, let nghttp2 = session.nghttp2 else { return }
    let reset = nghttp2_submit_rst_stream(
      nghttp2, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, HTTP2ErrorCode.internalError)
    if reset != 0 { loop.execute { [self] in closeSocket() } }
  }
}

extension [HeaderField] {
  /// Appends `Status` or `Metadata` header fields in place, without a mapped array between.
  fileprivate mutating func append(pairs: [(name: String, value: String)]) {
    for pair in pairs { append(HeaderField(name: pair.name, value: pair.value)) }
  }
}
