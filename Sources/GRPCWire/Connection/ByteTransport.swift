internal import CGRPCSystem
internal import Glibc

/// The byte stream under a connection: a non-blocking TCP socket, with or without TLS.
///
/// Loop-only, like the connection that owns it. `read` and `write` never block; when they
/// cannot progress they say which readiness to wait for.
protocol ByteTransport: AnyObject {
  /// Moves the TLS handshake on (plain TCP is done at once).
  func handshake() -> TransportProgress
  func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult
  func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult
  /// Closes the socket (after a TLS close_notify, best effort).
  func close()
  /// Bytes are ready to read that the socket no longer holds (decrypted by TLS, not yet read):
  /// a reader that stops before it has them would not be woken for them.
  var hasBufferedInput: Bool { get }
}

enum TransportProgress {
  case done
  case wantRead
  case wantWrite
  case failed(RPCError)
}

enum TransportResult {
  /// This many bytes were read or written.
  case bytes(Int)
  /// Nothing now: wait until the socket is readable (or writable, for TLS's own needs).
  case wouldBlock(wantWrite: Bool)
  /// The peer closed the stream cleanly.
  case closed
  /// The stream failed; the message says how.
  case failed(String)
}

/// Plain TCP.
final class PlainTransport: ByteTransport {
  let fd: Int32

  init(fd: Int32) {
    self.fd = fd
  }

  func handshake() -> TransportProgress { .done }

  var hasBufferedInput: Bool { false }

  func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult {
    while true {
      let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
      if count > 0 { return .bytes(count) }
      if count == 0 { return .closed }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return .wouldBlock(wantWrite: false)
      default: return .failed(errnoDescription(errno))
      }
    }
  }

  func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult {
    while true {
      let count = fleet_send_nosignal(fd, bytes.baseAddress, UInt(bytes.count))
      if count >= 0 { return .bytes(count) }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return .wouldBlock(wantWrite: true)
      default: return .failed(errnoDescription(errno))
      }
    }
  }

  func close() {
    Glibc.close(fd)
  }
}
