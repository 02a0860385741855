internal import CNGHTTP2

// nghttp2's callbacks for the server role: thin functions that recover the connection and
// forward. They run inside nghttp2_session_mem_recv/mem_send on the server's loop.

/// A server session whose callbacks reach `userData` (an unretained ServerConnection).
func makeServerSession(userData: UnsafeMutableRawPointer) -> OpaquePointer {
  var callbacks: OpaquePointer? = nil
  precondition(nghttp2_session_callbacks_new(&callbacks) == 0, "out of memory")
  defer { nghttp2_session_callbacks_del(callbacks) }
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, onServerBeginHeaders)
  nghttp2_session_callbacks_set_on_header_callback(callbacks, onServerHeader)
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onServerFrameReceived)
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onServerDataChunk)
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onServerStreamClose)
  // Window updates are ours to send: a request's bytes are acknowledged when its handler
  // reads it (ServerStream), so a slow handler holds its client back instead of queueing.
  var option: OpaquePointer? = nil
  precondition(nghttp2_option_new(&option) == 0, "out of memory")
  defer { nghttp2_option_del(option) }
  nghttp2_option_set_no_auto_window_update(option, 1)
  var session: OpaquePointer? = nil
  precondition(
    nghttp2_session_server_new2(&session, callbacks, userData, option) == 0, "out of memory")
  return session!
}

private func serverConnection(_ userData: UnsafeMutableRawPointer?) -> ServerConnection {
  Unmanaged<ServerConnection>.fromOpaque(userData!).takeUnretainedValue()
}

private func onServerBeginHeaders(
  _ session: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  let frame = frame!.pointee
  if frame.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) && frame.headers.cat == NGHTTP2_HCAT_REQUEST {
    let owner = serverConnection(userData)
    owner.headerBlock.clearKeepingUsualCapacity()
    owner.beginStream(frame.hd.stream_id)
  }
  return 0
}

private func onServerHeader(
  _ session: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
  _ name: UnsafePointer<UInt8>?, _ nameLength: Int, _ value: UnsafePointer<UInt8>?,
  _ valueLength: Int, _ flags: UInt8, _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  // Request headers only: nothing in request trailers matters to gRPC.
  let frame = frame!.pointee
  guard frame.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
  let owner = serverConnection(userData)
  guard owner.stream(frame.hd.stream_id) != nil else { return 0 }
  owner.headerBlock.appendReceived(
    name: name, nameLength: nameLength, value: value, valueLength: valueLength)
  return 0
}

private func onServerFrameReceived(
  _ session: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  let owner = serverConnection(userData)
  let frame = frame!.pointee
  owner.frameReceived()
  if frame.hd.type == UInt8(NGHTTP2_SETTINGS.rawValue)
    && frame.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0
  {
    owner.clientSettingsReceived()
    return 0
  }
  if frame.hd.type == UInt8(NGHTTP2_PING.rawValue) {
    if frame.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 {
      owner.pingReceived()
    } else {
      owner.pingAcknowledged()
    }
    return 0
  }
  guard let stream = owner.stream(frame.hd.stream_id) else { return 0 }
  let endStream = frame.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
  switch frame.hd.type {
  case UInt8(NGHTTP2_HEADERS.rawValue):
    if frame.headers.cat == NGHTTP2_HCAT_REQUEST {
      owner.requestHeadersReceived(stream, endStream: endStream)
    } else if endStream {
      // Request trailers: nothing in them matters to gRPC; the request stream is over.
      owner.requestStreamEnded(stream)
    }
  case UInt8(NGHTTP2_DATA.rawValue):
    if endStream {
      owner.requestStreamEnded(stream)
    } else if frame.hd.length < MessageFramer.prefixLength {
      owner.tinyDataFrameReceived(stream)
    }
  default:
    break
  }
  return 0
}

private func onServerDataChunk(
  _ session: OpaquePointer?, _ flags: UInt8, _ streamID: Int32, _ data: UnsafePointer<UInt8>?,
  _ length: Int, _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  let owner = serverConnection(userData)
  if let stream = owner.stream(streamID) {
    owner.dataReceived(stream, UnsafeRawBufferPointer(start: data, count: length))
  } else {
    // A stream no longer tracked: its bytes still count against the connection's window.
    owner.consume(streamID: streamID, length, streamOpen: false)
  }
  return 0
}

private func onServerStreamClose(
  _ session: OpaquePointer?, _ streamID: Int32, _ errorCode: UInt32,
  _ userData: UnsafeMutableRawPointer?
) -> Int32 {
  serverConnection(userData).streamClosed(streamID, errorCode: errorCode)
  return 0
}

/// The response body: nghttp2 pulls framed messages from the stream's queue; when the handler
/// is done and the queue is empty, the body ends without END_STREAM and the trailers follow.
func onServerDataSourceRead(
  _ session: OpaquePointer?, _ streamID: Int32, _ buffer: UnsafeMutablePointer<UInt8>?,
  _ length: Int, _ flags: UnsafeMutablePointer<UInt32>?,
  _ source: UnsafeMutablePointer<nghttp2_data_source>?, _ userData: UnsafeMutableRawPointer?
) -> Int {
  let stream = Unmanaged<ServerStream>.fromOpaque(source!.pointee.ptr).takeUnretainedValue()
  guard let (count, status) = stream.readOutbound(into: UnsafeMutableRawBufferPointer(start: buffer, count: length)) else {
    return Int(NGHTTP2_ERR_DEFERRED.rawValue)
  }
  if count > 0 { serverConnection(userData).responseDataSent() }
  if let (status, trailers) = status {
    flags!.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue) | UInt32(NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue)
    serverConnection(userData).submitTrailers(for: stream, status: status, trailers: trailers)
  }
  return count
}
