// The loop's read buffer, lent to one connection's read at a time (see
// ``EventLoop/readBuffer``).

extension EventLoop {
  /// Runs `body` with a buffer of `size` bytes (at most the shared buffer's) to read a socket
  /// into: the loop's shared `readBuffer`, lent until `body` returns, since a reader may keep
  /// pointing into it that long (HTTP2Session hands DATA to its role straight from it). A read
  /// while it is lent (nested in another's hand-over; none is today) gets a buffer of its own,
  /// freed when `body` returns. Loop only.
  func withReadBuffer<Result>(
    size: Int, _ body: (UnsafeMutableRawBufferPointer) -> Result
  ) -> Result {
    let size = min(size, readBuffer.count)
    guard !readBufferLent else {
      let own = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
      defer { own.deallocate() }
      return body(own)
    }
    readBufferLent = true
    defer { readBufferLent = false }
    return body(UnsafeMutableRawBufferPointer(rebasing: readBuffer[..<size]))
  }
}
