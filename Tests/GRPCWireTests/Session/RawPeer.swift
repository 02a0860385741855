import CNGHTTP2
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// One HTTP/2 frame as it was on the wire: its bytes, and its header's fields read from them.
struct RawFrame: CustomStringConvertible, Sendable {
  /// The whole frame: the 9-byte header, then the payload.
  let bytes: [UInt8]

  var type: UInt8 { bytes[3] }
  var flags: UInt8 { bytes[4] }
  var stream: UInt32 { bytes[5..<9].reduce(0) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF }
  var payload: ArraySlice<UInt8> { bytes[9...] }

  var description: String {
    "type \(type) flags 0x\(String(flags, radix: 16)) stream \(stream): "
      + bytes.map { String(format: "%02x", $0) }.joined(separator: " ")
  }

  /// The frames at the start of `bytes`, and how many bytes they take (an incomplete frame at
  /// the end is left).
  static func parse(_ bytes: ArraySlice<UInt8>) -> (frames: [RawFrame], consumed: Int) {
    var frames: [RawFrame] = []
    var offset = bytes.startIndex
    while offset + 9 <= bytes.endIndex {
      let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
      guard offset + 9 + length <= bytes.endIndex else { break }
      frames.append(RawFrame(bytes: Array(bytes[offset..<(offset + 9 + length)])))
      offset += 9 + length
    }
    return (frames, offset - bytes.startIndex)
  }
}

/// Runs `body`, which blocks, on a thread of its own: a test's blocking socket calls must not
/// hold one of the few threads of Swift's cooperative pool, which the channel's calls and the
/// server's handlers under test need (on 2 cores there are 2).
func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
  await withCheckedContinuation { continuation in
    Thread { continuation.resume(returning: body()) }.start()
  }
}

extension RawSocket {
  /// Reads frames (on a thread of its own) until `done` accepts the frames read so far or
  /// `timeout` passes; `skip` bytes (a client's connection preface) are read first and
  /// returned apart. Returns what was read, and whether the connection closed.
  func frames(
    skipping skip: Int = 0, timeout: Duration,
    until done: @escaping @Sendable ([RawFrame]) -> Bool
  ) async -> (skipped: [UInt8], frames: [RawFrame], closed: Bool) {
    await offThePool { self.readFrames(skipping: skip, timeout: timeout, until: done) }
  }

  private func readFrames(
    skipping skip: Int, timeout: Duration, until done: ([RawFrame]) -> Bool
  ) -> (skipped: [UInt8], frames: [RawFrame], closed: Bool) {
    let deadline = ContinuousClock.now + timeout
    var pending: [UInt8] = []
    var skipped: [UInt8] = []
    var frames: [RawFrame] = []
    var buffer = [UInt8](repeating: 0, count: 16 << 10)
    while true {
      if skipped.count < skip {
        let take = min(skip - skipped.count, pending.count)
        skipped += pending[..<take]
        pending.removeFirst(take)
      }
      if skipped.count == skip {
        let (parsed, consumed) = RawFrame.parse(pending[...])
        frames += parsed
        pending.removeFirst(consumed)
        if done(frames) { return (skipped, frames, false) }
      }
      let left = deadline - ContinuousClock.now
      guard left > .zero else { return (skipped, frames, false) }
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let milliseconds = Int32(
        left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
      guard poll(&poller, 1, max(milliseconds, 1)) > 0 else { continue }
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count <= 0 { return (skipped, frames, true) }
      pending += buffer[..<count]
    }
  }

  /// Sends `bytes` one byte per write, so the peer may read them in as many pieces.
  func sendBytewise(_ bytes: [UInt8]) {
    for byte in bytes { send([byte]) }
  }
}

/// A listening loopback TCP socket on a port the OS picks, for playing a gRPC server by hand.
final class RawListener: Sendable {
  let fd: Int32
  let port: Int

  init() throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0
      }
    }
    guard bound else {
      close(fd)
      throw POSIXError(.EADDRNOTAVAIL)
    }
    self.fd = fd
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  deinit { close(fd) }

  /// The next connection (awaited on a thread of its own), or nil when none arrives within
  /// `timeout`.
  func accept(timeout: Duration) async -> RawSocket? {
    await offThePool { self.acceptBlocking(timeout: timeout) }
  }

  private func acceptBlocking(timeout: Duration) -> RawSocket? {
    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let milliseconds = Int32(
      timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
    guard poll(&poller, 1, milliseconds) > 0 else { return nil }
    let connection = Glibc.accept(fd, nil, nil)
    return connection < 0 ? nil : RawSocket(adopting: connection)
  }
}

/// An HPACK decoder (nghttp2's inflater) for the header blocks one side of a connection
/// sends: its dynamic table lives as long as the connection.
final class HPACKReader {
  private var inflater: OpaquePointer?

  init() {
    precondition(nghttp2_hd_inflate_new(&inflater) == 0, "out of memory")
  }

  deinit { nghttp2_hd_inflate_del(inflater) }

  /// The fields of `frame`, a HEADERS frame carrying a whole block (END_HEADERS); nil when
  /// the block does not decode.
  func fields(of frame: RawFrame) -> [(name: String, value: String)]? {
    var block = Array(frame.payload)
    if frame.flags & 0x8 != 0 {  // PADDED
      let padding = Int(block.removeFirst())
      block.removeLast(padding)
    }
    if frame.flags & 0x20 != 0 { block.removeFirst(5) }  // PRIORITY
    var fields: [(name: String, value: String)] = []
    let decoded = block.withUnsafeBufferPointer { input -> Bool in
      var cursor = input.baseAddress!
      var left = input.count
      while true {
        var field = nghttp2_nv()
        var flags: Int32 = 0
        let used = nghttp2_hd_inflate_hd2(inflater, &field, &flags, cursor, left, 1)
        if used < 0 { return false }
        cursor += used
        left -= used
        if flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) != 0 {
          fields.append(
            (
              String(decoding: UnsafeBufferPointer(start: field.name, count: field.namelen), as: UTF8.self),
              String(decoding: UnsafeBufferPointer(start: field.value, count: field.valuelen), as: UTF8.self)
            ))
        }
        if flags & Int32(NGHTTP2_HD_INFLATE_FINAL.rawValue) != 0 {
          nghttp2_hd_inflate_end_headers(inflater)
          return true
        }
        if used == 0 && left == 0 { return false }
      }
    }
    return decoded ? fields : nil
  }
}
