internal import CGRPCSystem
internal import Glibc

/// A connection turned away at accept because its client address is being refused for
/// glitches (``PeerGlitchBuckets/refuses(_:now:)``): no nghttp2 session, no
/// ``ServerConnection``. On plaintext it is told why with canned bytes — our SETTINGS (the
/// server's preface) and GOAWAY ENHANCE_YOUR_CALM naming no stream — then half-closed; on TLS,
/// which would need a handshake first, it is just closed.
///
/// Loop-only. What the client sent is read and dropped until it closes, or for at most a
/// second: closing a socket with unread bytes would send a reset, which may discard the
/// GOAWAY at the client before it is read.
final class RefusedConnection: EventHandler, TimerTarget {
  private let loop: EventLoop
  private let fd: Int32
  private var timer: TimerID?
  private var open = true

  /// An empty SETTINGS frame, then GOAWAY (last stream 0, ENHANCE_YOUR_CALM).
  private static let goAway: [UInt8] = [
    0, 0, 0, 4, 0, 0, 0, 0, 0,
    0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0B,
  ]
  /// The longest a refused client's socket is kept for it to close first.
  private static let linger: Duration = .seconds(1)

  /// Refuses the accepted `fd` on `loop` (the loop that accepted it).
  static func refuse(_ fd: Int32, on loop: EventLoop, goAway: Bool) {
    guard goAway else {
      Glibc.close(fd)
      return
    }
    // One non-blocking write of 26 bytes to a new socket: it fits, or the client is gone.
    let sent = Self.goAway.withUnsafeBytes {
      fleet_send_nosignal(fd, $0.baseAddress, UInt($0.count))
    }
    guard sent == Self.goAway.count, shutdown(fd, Int32(SHUT_WR)) == 0 else {
      Glibc.close(fd)
      return
    }
    let refused = RefusedConnection(loop: loop, fd: fd)
    loop.register(fd, .read, refused)
    refused.timer = loop.scheduleTimer(at: .now.advanced(by: linger), target: refused)
  }

  private init(loop: EventLoop, fd: Int32) {
    self.loop = loop
    self.fd = fd
  }

  func readable() {
    // Thrown away, into what the loop lends for reading.
    loop.withReadBuffer(size: loop.readBuffer.count) { drain(into: $0) }
  }

  private func drain(into buffer: UnsafeMutableRawBufferPointer) {
    while true {
      let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
      if count > 0 { continue }
      if count < 0 && errno == EINTR { continue }
      if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
      // The client closed (or the socket failed): nothing is left unread.
      return close()
    }
  }

  func writable() {}

  func timerFired() {
    timer = nil
    close()
  }

  func loopClosing() { close() }

  private func close() {
    guard open else { return }
    open = false
    if let timer { loop.cancelTimer(timer) }
    timer = nil
    loop.unregister(fd)
    Glibc.close(fd)
  }
}
