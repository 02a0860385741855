#if canImport(Glibc)
  import Glibc
#endif

/// Reads a server's frames off a ``RawSocket`` as fast as they come, keeping only their
/// headers and the DATA bytes of stream 1: a client that never lets the socket fill.
struct RawFrameReader {
  struct Header {
    var type: UInt8
    var flags: UInt8
    var stream: UInt32
  }

  let socket: RawSocket
  /// DATA payload bytes (with padding) of stream 1 so far.
  private(set) var streamBytes = 0
  private var buffer = [UInt8](repeating: 0, count: 1 << 20)
  /// Received bytes not yet parsed (a frame header cut by a read).
  private var partial: [UInt8] = []
  /// Payload bytes still to skip of the frame being read.
  private var skipping = 0
  /// Frame headers parsed but not yet looked at.
  private var headers: [Header] = []

  init(socket: RawSocket) { self.socket = socket }

  /// Reads until a frame `matches` (returned) or `timeout` passes, or the connection ends (nil).
  mutating func read(until timeout: Duration, _ matches: (Header) -> Bool) -> Header? {
    let deadline = ContinuousClock.now + timeout
    while true {
      while !headers.isEmpty {
        let header = headers.removeFirst()
        if matches(header) { return header }
      }
      let left = deadline - ContinuousClock.now
      guard left > .zero else { return nil }
      var poller = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
      let milliseconds = Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
      guard poll(&poller, 1, max(milliseconds, 1)) > 0 else { continue }
      let count = buffer.withUnsafeMutableBytes { recv(socket.fd, $0.baseAddress, $0.count, 0) }
      guard count > 0 else { return nil }
      parse(count)
    }
  }

  private mutating func parse(_ count: Int) {
    var index = 0
    while index < count {
      if skipping > 0 {
        let skipped = min(skipping, count - index)
        skipping -= skipped
        index += skipped
        continue
      }
      let needed = 9 - partial.count
      let taken = min(needed, count - index)
      partial += buffer[index..<(index + taken)]
      index += taken
      guard partial.count == 9 else { continue }
      let length = Int(partial[0]) << 16 | Int(partial[1]) << 8 | Int(partial[2])
      let stream = UInt32(partial[5] & 0x7F) << 24 | UInt32(partial[6]) << 16 | UInt32(partial[7]) << 8 | UInt32(partial[8])
      let header = Header(type: partial[3], flags: partial[4], stream: stream)
      partial.removeAll(keepingCapacity: true)
      if header.type == 0x0 && stream == 1 { streamBytes += length }
      headers.append(header)
      skipping = length
    }
  }
}
