internal import CNGHTTP2
internal import Logging

/// The glitch limiter (``GlitchLimiter``, ``ServerOptions/glitchLimit``): nghttp2's
/// callbacks record what a frame did, and after each read or write the connection takes it
/// from its own bucket and from its client address's (``PeerGlitchBuckets``).
extension ServerConnection {
  /// A frame's header arrived: PRIORITY (gRPC has no use for it), a type nghttp2 does not
  /// know, and empty DATA that does not end its stream are glitches — they carry nothing.
  func frameBegins(_ header: nghttp2_frame_hd) {
    switch header.type {
    case UInt8(NGHTTP2_PRIORITY.rawValue):
      glitches?.record()
    case UInt8(NGHTTP2_DATA.rawValue):
      if header.length == 0 && header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) == 0 {
        glitches?.record()
      }
    case 10...:
      // HTTP/2's own types are 0–9 (RFC 9113 §6); ALTSVC, ORIGIN and PRIORITY_UPDATE are
      // extensions nghttp2 is not asked to handle here.
      glitches?.record()
    default:
      break
    }
  }

  /// nghttp2 reset a stream because of what the client sent: a zero-increment WINDOW_UPDATE
  /// or malformed headers (PROTOCOL_ERROR), DATA after the request ended (STREAM_CLOSED), a
  /// request beyond the stream limit (REFUSED_STREAM), a flow-control or frame-size
  /// violation. Our own resets (CANCEL, INTERNAL_ERROR) are not the client's doing.
  func resetSent(errorCode: UInt32) {
    switch errorCode {
    case 0x1, 0x3, 0x5, 0x6, HTTP2ErrorCode.refusedStream: glitches?.record()
    default: break
    }
  }

  /// A request refused as malformed rather than for what it asked (an unknown method or
  /// encoding is an honest mistake): not POST, not gRPC's content-type, a `grpc-timeout`
  /// that does not parse.
  func malformedRequestRefused() {
    glitches?.record()
  }

  /// How much is read at once, and processed before the limit is checked again, once a
  /// client has glitched (on this connection, or from its address with the address's
  /// bucket empty): about a hundred frames.
  static let glitchingReadSlice = 1 << 10

  /// Takes the glitches recorded since the last check from the bucket; once it is empty,
  /// ends the session with GOAWAY ENHANCE_YOUR_CALM and closes. False when the connection
  /// is over. Outside nghttp2's callbacks only.
  func glitchLimitHolds() -> Bool {
    guard var limiter = glitches, limiter.pending > 0 else { return true }
    let now = MonotonicInstant.now.nanoseconds
    let count = limiter.pending
    // Both buckets pay, so that neither forgets what the other saw.
    let connectionHolds = limiter.settle(now: now)
    let addressHolds =
      server?.peerGlitches?.take(count, from: peerAddress, now: now) ?? true
    glitches = limiter
    // A glitching client: from now on it is read a little at a time, and checked after
    // each, so that past the limit little more of it is processed.
    readSlice = Self.glitchingReadSlice
    guard !(connectionHolds && addressHolds) else { return true }
    logger.notice(
      "too many glitches: GOAWAY ENHANCE_YOUR_CALM",
      metadata: [
        "grpc.glitches": "\(limiter.total)", "grpc.glitch_burst": "\(limiter.limit.burst)",
        "grpc.glitch_bucket": "\(connectionHolds ? "client address" : "connection")",
      ])
    if let nghttp2 = session.nghttp2 {
      _ = nghttp2_session_terminate_session(nghttp2, HTTP2ErrorCode.enhanceYourCalm)
      _ = session.flush()
    }
    server?.peerGlitches?.connectionEnded(peerAddress, now: now)
    closeSocket()
    return false
  }

  /// The client's address without its port (`peer` is `address:port`): the key of its glitch
  /// bucket and of its refusals.
  static func address(ofPeer peer: String) -> String {
    peer.lastIndex(of: ":").map { String(peer[..<$0]) } ?? peer
  }
}
