/// Responses, as the session asks the connection about them (on the loop): the body nghttp2
/// pulls from a stream's queue, a response started, a reset that could not be queued. The
/// streams submit their responses through the session themselves (``ServerStream``'s
/// `+Response`).
extension ServerConnection {
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
      stream.submitTrailers(status: status, trailers: trailers)
    }
    return pull
  }

  /// A response's headers go out: PINGs that follow are fair, as after its data
  /// (``responseDataSent()``).
  func responseStarted() { pingStrikes = 0 }

  /// nghttp2 could not queue the reset of a response it refused (out of memory): the
  /// connection goes (soon: this may come from inside the data provider).
  func resetNotQueued(_ id: Int32) { closeSocketSoon() }
}
