internal import CNGHTTP2

// nghttp2's callbacks for the client role. Each is a thin function that recovers its owner
// and forwards; they run inside nghttp2_session_mem_recv/mem_send on the connection's loop.
// Bytes handed to them are valid only during the call, so what is kept is copied.

/// HTTP/2 settings a client connection announces, and how its session is made.
struct HTTP2Settings: Sendable {
  /// SETTINGS_INITIAL_WINDOW_SIZE: how much one stream may receive unread. Large enough for a
  /// single stream to fill loopback, small enough to bound a slow reader's memory.
  var streamWindow: Int32 = 4 << 20
  /// The connection's receive window, shared by all its streams.
  var connectionWindow: Int32 = 16 << 20
  /// SETTINGS_MAX_HEADER_LIST_SIZE.
  var maxHeaderListSize: UInt32 = 64 << 10

  /// Queues our SETTINGS and connection window; false when nghttp2 cannot (out of memory).
  func submit(to session: OpaquePointer) -> Bool {
    let entries = [
      nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
      nghttp2_settings_entry(
        settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: UInt32(streamWindow)),
      nghttp2_settings_entry(
        settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: maxHeaderListSize),
    ]
    return nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), entries, entries.count) == 0
      && nghttp2_session_set_local_window_size(
        session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, connectionWindow) == 0
  }

  /// A client session whose callbacks reach `userData` (an unretained ClientConnection).
  /// Window updates are ours to send (NO_AUTO_WINDOW_UPDATE): see ClientStream.
  static func makeClientSession(userData: UnsafeMutableRawPointer) -> OpaquePointer {
    var callbacks: OpaquePointer? = nil
    precondition(nghttp2_session_callbacks_new(&callbacks) == 0, "out of memory")
    defer { nghttp2_session_callbacks_del(callbacks) }
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, onBeginHeaders)
    nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameReceived)
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)

    var option: OpaquePointer? = nil
    precondition(nghttp2_option_new(&option) == 0, "out of memory")
    defer { nghttp2_option_del(option) }
    nghttp2_option_set_no_auto_window_update(option, 1)

    var session: OpaquePointer? = nil
    precondition(
      nghttp2_session_client_new2(&session, callbacks, userData, option) == 0, "out of memory")
    return session!
  }
}

private func connection(_ userData: UnsafeMutableRawPointer?) -> ClientConnection {
  Unmanaged<ClientConnection>.fromOpaque(userData!).takeUnretainedValue()
}

private func onBeginHeaders(
  _ session: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  if frame!.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) {
    connection(userData).headerBlock.clearKeepingUsualCapacity()
  }
  return 0
}

private func onHeader(
  _ session: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
  _ name: UnsafePointer<UInt8>?, _ nameLength: Int, _ value: UnsafePointer<UInt8>?,
  _ valueLength: Int, _ flags: UInt8, _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  let owner = connection(userData)
  guard owner.stream(frame!.pointee.hd.stream_id) != nil else { return 0 }
  owner.headerBlock.appendReceived(
    name: name, nameLength: nameLength, value: value, valueLength: valueLength)
  return 0
}

private func onFrameReceived(
  _ session: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  let owner = connection(userData)
  let hd = frame!.pointee.hd
  switch hd.type {
  case UInt8(NGHTTP2_HEADERS.rawValue):
    let endStream = hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
    owner.stream(hd.stream_id)?.receivedHeaders(owner.headerBlock, endStream: endStream)
  case UInt8(NGHTTP2_GOAWAY.rawValue):
    let goAway = frame!.pointee.goaway
    let debugData =
      goAway.opaque_data.map {
        String(decoding: UnsafeBufferPointer(start: $0, count: goAway.opaque_data_len), as: UTF8.self)
      } ?? ""
    owner.goAwayReceived(
      lastStreamID: goAway.last_stream_id, errorCode: goAway.error_code, debugData: debugData)
  case UInt8(NGHTTP2_SETTINGS.rawValue):
    if hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 { owner.settingsReceived() }
  case UInt8(NGHTTP2_PING.rawValue):
    if hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0 { owner.pingAcknowledged() }
  default:
    break
  }
  return 0
}

private func onDataChunk(
  _ session: OpaquePointer?, _ flags: UInt8, _ streamID: Int32, _ data: UnsafePointer<UInt8>?,
  _ length: Int, _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  let owner = connection(userData)
  if let stream = owner.stream(streamID) {
    stream.receivedData(UnsafeRawBufferPointer(start: data, count: length))
  } else {
    // A stream we no longer track: its bytes still count against the connection window.
    owner.consume(streamID: streamID, length, streamOpen: false)
  }
  return 0
}

private func onStreamClose(
  _ session: OpaquePointer?, _ streamID: Int32, _ errorCode: UInt32,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  connection(userData).streamClosed(streamID, http2ErrorCode: errorCode)
  return 0
}

/// The request body: nghttp2 pulls framed messages from the stream's queue.
func onDataSourceRead(
  _ session: OpaquePointer?, _ streamID: Int32, _ buffer: UnsafeMutablePointer<UInt8>?,
  _ length: Int, _ flags: UnsafeMutablePointer<UInt32>?, _ source: UnsafeMutablePointer<nghttp2_data_source>?,
  _ userData: UnsafeMutableRawPointer?
) -> Int {
  let stream = Unmanaged<ClientStream>.fromOpaque(source!.pointee.ptr).takeUnretainedValue()
  guard let (count, eof) = stream.readOutbound(into: UnsafeMutableRawBufferPointer(start: buffer, count: length)) else {
    return Int(NGHTTP2_ERR_DEFERRED.rawValue)
  }
  if eof { flags!.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue) }
  return count
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
