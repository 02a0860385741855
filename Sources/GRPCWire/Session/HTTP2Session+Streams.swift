/// The session's stream table: the open streams of either role by ID (``HTTP2Session/streams``),
/// which the role adds to as a stream begins (a server's) or is submitted (a client's) and
/// removes from as nghttp2 closes it, and whose streams it reads as its own type.
extension HTTP2Session {
  /// The open stream `id`. The session hands over several events per call (headers, each
  /// DATA chunk, trailers, the close), nearly always for the stream of the call before: that
  /// one is kept at hand rather than hashed for again.
  func stream(_ id: Int32) -> StreamCore? {
    if let last = lastFound, last.id == id { return last }
    let found = streams[id]
    if found != nil { lastFound = found }
    return found
  }

  /// `stream`, with its ID set, is open.
  func add(_ stream: StreamCore) {
    streams[stream.id] = stream
  }

  /// Removes the stream `id` (nghttp2 closed it) and returns it, if it was open.
  func removeStream(_ id: Int32) -> StreamCore? {
    if lastFound?.id == id { lastFound = nil }
    return streams.removeValue(forKey: id)
  }

  /// Removes every stream (the connection closes) and returns them.
  func removeAllStreams() -> [StreamCore] {
    lastFound = nil
    defer { streams.removeAll() }
    return Array(streams.values)
  }
}
