internal import CNGHTTP2

// nghttp2's callbacks, the same for both roles: each recovers the session and records the
// event in its `recorded` batch, which the session hands to its role once mem_recv or
// mem_send has returned (HTTP2Session.handOver). They run on the connection's loop; bytes
// handed to them are valid only during the call, so what is kept is copied.

/// The HTTP/2 settings a connection announces.
struct HTTP2Settings: Sendable {
  /// SETTINGS_INITIAL_WINDOW_SIZE: how much one stream may receive unread. Large enough for a
  /// single stream to fill loopback, small enough to bound a slow reader's memory.
  var streamWindow: Int32 = 4 << 20
  /// The connection's receive window, shared by all its streams.
  var connectionWindow: Int32 = 16 << 20
  /// SETTINGS_MAX_HEADER_LIST_SIZE, if announced (a client's, for response headers).
  var maxHeaderListSize: UInt32? = 64 << 10
  /// SETTINGS_MAX_CONCURRENT_STREAMS, if announced (a server's).
  var maxConcurrentStreams: UInt32? = nil
  /// SETTINGS_ENABLE_PUSH 0: a client refuses server push.
  var refusesPush = true

  /// What a server announces.
  static func server(maxConcurrentStreams: Int) -> HTTP2Settings {
    HTTP2Settings(
      maxHeaderListSize: nil, maxConcurrentStreams: UInt32(clamping: maxConcurrentStreams),
      refusesPush: false)
  }

  /// Queues our SETTINGS and connection window; false when nghttp2 cannot (out of memory).
  func submit(to session: OpaquePointer) -> Bool {
    var entries: [nghttp2_settings_entry] = []
    func announce(_ id: nghttp2_settings_id, _ value: UInt32) {
      entries.append(nghttp2_settings_entry(settings_id: Int32(id.rawValue), value: value))
    }
    if let maxConcurrentStreams { announce(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, maxConcurrentStreams) }
    if refusesPush { announce(NGHTTP2_SETTINGS_ENABLE_PUSH, 0) }
    announce(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, UInt32(streamWindow))
    if let maxHeaderListSize { announce(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, maxHeaderListSize) }
    return nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), entries, entries.count) == 0
      && nghttp2_session_set_local_window_size(
        session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, connectionWindow) == 0
  }
}

/// A session of `role` whose callbacks reach `userData` (an unretained HTTP2Session).
/// Window updates are ours to send (NO_AUTO_WINDOW_UPDATE): a stream's bytes are
/// acknowledged as its reader takes them, so a slow reader holds its peer back instead of
/// queueing.
func makeSession(_ role: HTTP2Session.Role, userData: UnsafeMutableRawPointer) -> OpaquePointer {
  var callbacks: OpaquePointer? = nil
  precondition(nghttp2_session_callbacks_new(&callbacks) == 0, "out of memory")
  defer { nghttp2_session_callbacks_del(callbacks) }
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, onBeginHeaders)
  nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameReceived)
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
  nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks, onInvalidFrame)

  var option: OpaquePointer? = nil
  precondition(nghttp2_option_new(&option) == 0, "out of memory")
  defer { nghttp2_option_del(option) }
  nghttp2_option_set_no_auto_window_update(option, 1)
  if role == .server {
    // The glitch limiter's eyes (GlitchLimiter): every frame's header, the resets nghttp2
    // sends, and frames of unknown types, which nghttp2 would otherwise drop unseen (it
    // shows a frame of a type only when it is registered as an extension).
    nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks, onBeginFrame)
    nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onFrameSent)
    nghttp2_session_callbacks_set_unpack_extension_callback(callbacks, onUnpackExtension)
    nghttp2_session_callbacks_set_on_extension_chunk_recv_callback(callbacks, onExtensionChunk)
    for type in UInt8(10)...UInt8(255) { nghttp2_option_set_user_recv_extension_type(option, type) }
  }

  var session: OpaquePointer? = nil
  let made =
    switch role {
    case .client: nghttp2_session_client_new2(&session, callbacks, userData, option)
    case .server: nghttp2_session_server_new2(&session, callbacks, userData, option)
    }
  precondition(made == 0, "out of memory")
  return session!
}

/// `body` with the session `userData` points to, neither retained nor released: the session
/// is alive throughout, since nghttp2 calls back only from inside its own calls, which the
/// session (or its role, which owns it) makes. A dozen callbacks per call each paid a
/// retain and a release for it.
@inline(__always)
private func withSession<R>(
  _ userData: UnsafeMutableRawPointer?, _ body: (HTTP2Session) -> R
) -> R {
  Unmanaged<HTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
}

private func onBeginHeaders(
  _ nghttp2: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  withSession(userData) { owner in
    guard frame!.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else {
      owner.recorded.headersBegin(streamID: frame!.pointee.hd.stream_id, keep: false)
      return 0
    }
    // Decided once per block, not per field: a block's frames come back to back (HTTP/2 lets
    // nothing in between), so the answer holds for each of its fields.
    owner.recorded.headersBegin(
      streamID: frame!.pointee.hd.stream_id, keep: owner.keepsFields(of: headersKind(frame!)))
    return 0
  }
}

private func headersKind(_ frame: UnsafePointer<nghttp2_frame>) -> ReceivedHeaders.Kind {
  switch frame.pointee.headers.cat {
  case NGHTTP2_HCAT_REQUEST: .request
  case NGHTTP2_HCAT_RESPONSE: .response
  default: .trailers
  }
}

private func onHeader(
  _ nghttp2: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
  _ name: UnsafePointer<UInt8>?, _ nameLength: Int, _ value: UnsafePointer<UInt8>?,
  _ valueLength: Int, _ flags: UInt8, _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  withSession(userData) { owner in
    owner.recorded.field(
      name: name, nameLength: nameLength, value: value, valueLength: valueLength,
      recent: &owner.recentHeaderTexts)
    return 0
  }
}

private func onFrameReceived(
  _ nghttp2: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  withSession(userData) { owner in frameReceived(frame!, by: owner) }
}

private func frameReceived(_ frame: UnsafePointer<nghttp2_frame>, by owner: HTTP2Session)
  -> Int32
{
  let hd = frame.pointee.hd
  switch hd.type {
  case UInt8(NGHTTP2_HEADERS.rawValue):
    owner.recorded.headersEnded(
      ReceivedHeaders(
        streamID: hd.stream_id, kind: headersKind(frame),
        endStream: hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0))
  case UInt8(NGHTTP2_GOAWAY.rawValue):
    let goAway = frame.pointee.goaway
    owner.recorded.goAway(
      lastStreamID: goAway.last_stream_id, errorCode: goAway.error_code,
      debugData: UnsafeRawBufferPointer(start: goAway.opaque_data, count: goAway.opaque_data_len))
  default:
    guard owner.recordsFrame(ofType: hd.type) else { return 0 }
    owner.recorded.append(
      .frame(ReceivedFrame(type: hd.type, flags: hd.flags, streamID: hd.stream_id, length: hd.length)))
  }
  return 0
}

private func onDataChunk(
  _ nghttp2: OpaquePointer?, _ flags: UInt8, _ streamID: Int32, _ data: UnsafePointer<UInt8>?,
  _ length: Int, _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  withSession(userData) { owner in
    owner.recorded.data(
      streamID: streamID, UnsafeRawBufferPointer(start: data, count: length), lent: owner.lentInput)
    return 0
  }
}

private func onStreamClose(
  _ nghttp2: OpaquePointer?, _ streamID: Int32, _ errorCode: UInt32,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  withSession(userData) { owner in
    // A block still arriving on the stream never ends now: nghttp2 drops the rest unseen.
    owner.recorded.dropOpenBlock(of: streamID)
    owner.recorded.append(.streamClosed(streamID, errorCode: errorCode))
    return 0
  }
}

/// nghttp2 refused a frame. For HEADERS this is a stream error (RFC 9113 §8.1.1: a field
/// name with upper case, a forbidden or missing pseudo-header, a bad pseudo-header value):
/// nghttp2 has queued RST_STREAM PROTOCOL_ERROR, skips the rest of the block and never
/// reports its end (no frame-received callback), so its open block is dropped here.
private func onInvalidFrame(
  _ nghttp2: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?, _ libError: Int32,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  let hd = frame!.pointee.hd
  guard hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
  return withSession(userData) { owner in
    owner.recorded.dropOpenBlock(of: hd.stream_id)
    owner.recorded.append(.headersRejected(streamID: hd.stream_id, libError: libError))
    return 0
  }
}

private func onBeginFrame(
  _ nghttp2: OpaquePointer?, _ header: UnsafePointer<nghttp2_frame_hd>?,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  withSession(userData) { $0.role?.frameBegins(header!.pointee) }
  return 0
}

private func onFrameSent(
  _ nghttp2: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  guard frame!.pointee.hd.type == UInt8(NGHTTP2_RST_STREAM.rawValue) else { return 0 }
  withSession(userData) { $0.role?.resetSent(errorCode: frame!.pointee.rst_stream.error_code) }
  return 0
}

/// A frame of an unknown type is dropped: its payload is not kept, and nothing is made of it.
private func onUnpackExtension(
  _ nghttp2: OpaquePointer?, _ payload: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
  _ header: UnsafePointer<nghttp2_frame_hd>?, _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  NGHTTP2_ERR_CANCEL.rawValue
}

private func onExtensionChunk(
  _ nghttp2: OpaquePointer?, _ header: UnsafePointer<nghttp2_frame_hd>?,
  _ data: UnsafePointer<UInt8>?, _ length: Int, _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  0
}

/// Header fields as nghttp2_nv, valid for the duration of `body` (nghttp2 copies them).
enum HeaderBlock {
  static func withNameValues<R>(
    _ fields: [HeaderField], _ body: (UnsafePointer<nghttp2_nv>, Int) -> R
  ) -> R {
    // Every request, response and trailer block passes here: the nv entries and the bytes of
    // every name and value go into one temporary buffer (on the stack when small), not three
    // arrays on the heap.
    withUnsafeTemporaryAllocation(
      byteCount: byteCount(fields), alignment: MemoryLayout<nghttp2_nv>.alignment
    ) { raw in
      body(layOut(fields, at: raw.baseAddress!), fields.count)
    }
  }

  /// The bytes ``layOut(_:at:)`` writes for `fields`.
  static func byteCount(_ fields: [HeaderField]) -> Int {
    var byteCount = MemoryLayout<nghttp2_nv>.stride * fields.count
    for field in fields { byteCount += field.name.utf8.count + field.value.utf8.count }
    return byteCount
  }

  /// Writes one nghttp2 pair per field at `raw` (aligned for nghttp2_nv), followed by the bytes
  /// of their names and values, which the pairs point to.
  static func layOut(_ fields: [HeaderField], at raw: UnsafeMutableRawPointer)
    -> UnsafeMutablePointer<nghttp2_nv>
  {
    let nva = raw.bindMemory(to: nghttp2_nv.self, capacity: fields.count)
    var cursor = (raw + MemoryLayout<nghttp2_nv>.stride * fields.count)
      .assumingMemoryBound(to: UInt8.self)
    func copy(_ string: String) -> (UnsafeMutablePointer<UInt8>, Int) {
      var string = string
      let start = cursor
      let count = string.withUTF8 { utf8 in
        if let base = utf8.baseAddress { start.update(from: base, count: utf8.count) }
        return utf8.count
      }
      cursor += count
      return (start, count)
    }
    for (i, field) in fields.enumerated() {
      let (name, nameLength) = copy(field.name)
      let (value, valueLength) = copy(field.value)
      (nva + i).initialize(
        to: nghttp2_nv(
          name: name, value: value, namelen: nameLength, valuelen: valueLength,
          flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
    }
    return nva
  }
}
