/// The session's stream table: the open streams of either role by ID (``HTTP2Session/streams``),
/// which the role adds to as a stream begins (a server's) or is submitted (a client's), and
/// whose streams it reads as its own type. The session finds the stream of each event it
/// hands over, and takes it out of the table as nghttp2 closes it.
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

  /// The open stream `id` as the role's type `S` (a session has one role, so its streams are
  /// all of that role's type).
  func stream<S: StreamCore>(_ id: Int32, as _: S.Type) -> S? {
    stream(id).map { unsafeDowncast($0, to: S.self) }
  }

  /// The open streams as the role's type `S`, a list of them.
  func streams<S: StreamCore>(as _: S.Type) -> [S] {
    streams.values.map { unsafeDowncast($0, to: S.self) }
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

  /// Removes every stream (the connection closes) and returns them, as the role's type `S`.
  func removeAllStreams<S: StreamCore>(as type: S.Type) -> [S] {
    lastFound = nil
    defer { streams.removeAll() }
    return streams(as: type)
  }
}
