internal import CNGHTTP2

/// What nghttp2's data provider takes from a stream's outbound queue in one pull (either
/// role: a request's body or a response's).
enum BodyPull: Equatable {
  /// Nothing queued and the body not over: nghttp2 defers the stream until it is resumed.
  case deferred
  /// `count` bytes copied into nghttp2's buffer; `last`: the body ends with them.
  case bytes(Int, last: Bool)
}

/// The one data provider of both roles: nghttp2 pulls a stream's body (a request's on a
/// client, a response's on a server) from its ``StreamCore``
/// (``StreamCore/pullBody(into:resume:)``).
extension HTTP2Session {
  /// The data provider for the body of `stream`, which nghttp2 hands back as its source.
  static func bodyProvider(for stream: StreamCore) -> nghttp2_data_provider {
    var provider = nghttp2_data_provider()
    provider.source.ptr = Unmanaged.passUnretained(stream).toOpaque()
    provider.read_callback = onStreamBodyRead
    return provider
  }

  /// Resumes the body of stream `id`, which nghttp2 deferred for want of bytes (the role's
  /// stream said so with `deferred`, which this clears); nghttp2's return code, 0 when
  /// nothing was deferred.
  func resumeBody(of id: Int32, deferred: inout Bool) -> Int32 {
    guard deferred, let nghttp2 else { return 0 }
    deferred = false
    scheduleFlush()
    return nghttp2_session_resume_data(nghttp2, id)
  }
}

/// A stream's body: nghttp2 pulls queued bytes from the stream (inside mem_send). A
/// request's body ends its stream; a response's is followed by the trailers the role
/// submitted as it ended (NO_END_STREAM).
private func onStreamBodyRead(
  _ session: OpaquePointer?, _ streamID: Int32, _ buffer: UnsafeMutablePointer<UInt8>?,
  _ length: Int, _ flags: UnsafeMutablePointer<UInt32>?,
  _ source: UnsafeMutablePointer<nghttp2_data_source>?, _ userData: UnsafeMutableRawPointer?
) -> Int {
  // Neither retained nor released: nghttp2 calls back from inside the session's mem_send,
  // and the stream is in its session's table while nghttp2 may pull its body.
  Unmanaged<HTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef { session in
    // Writers the pull made room for are resumed once mem_send has returned
    // (HTTP2Session.handOver), not inside it.
    let pull = Unmanaged<StreamCore>.fromOpaque(source!.pointee.ptr)._withUnsafeGuaranteedRef {
      $0.pullBody(
        into: UnsafeMutableRawBufferPointer(start: buffer, count: length),
        resume: &session.writersToResume)
    }
    switch pull {
    case .deferred:
      return Int(NGHTTP2_ERR_DEFERRED.rawValue)
    case .bytes(let count, let last):
      if last {
        flags!.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
        if session.sessionRole == .server {
          flags!.pointee |= UInt32(NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue)
        }
      }
      return count
    }
  }
}
