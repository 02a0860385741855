import Foundation
import Glibc

// The far end of a fuzzed HTTP/2 session: a loopback TCP socket the fuzz thread drives with
// blocking-free calls and deadlines, and the few frames it writes by hand. The session under
// test (our server or our client) runs as in production, on its own event loop.

/// How long the peer under test has for each step before the input counts as a hang.
let sessionStepTimeout: Duration = .seconds(10)

extension FuzzTarget {
  /// A session target: `run` feeds an input to the peer under test on a fresh connection
  /// (`midCall` false) or in the middle of a call (true, its name ending `-mid-call`).
  static func session(
    _ name: String, _ summary: String, midCall: Bool,
    seeds: @escaping @Sendable (Bool) -> [(name: String, bytes: [UInt8])],
    run: @escaping @Sendable (UnsafeRawBufferPointer, Bool) -> Void
  ) -> FuzzTarget {
    FuzzTarget(
      name: midCall ? name + "-mid-call" : name, summary: summary,
      seeds: { seeds(midCall) }, run: { run($0, midCall) })
  }
}

/// Writes `input` to `socket`, then half-closes it: `peer` must keep reading (it may close
/// the connection before taking everything, after a GOAWAY: that is fine) and must close the
/// connection after our EOF, each within ``sessionStepTimeout``.
func feed(_ input: UnsafeRawBufferPointer, to socket: inout SessionSocket, peer: String) {
  let deadline = ContinuousClock.now + sessionStepTimeout
  _ = socket.write(Array(input), by: deadline)
  invariant(.now < deadline, "\(peer) stopped reading for \(sessionStepTimeout)")
  invariant(
    socket.finish(by: .now + sessionStepTimeout),
    "\(peer) did not close the connection within \(sessionStepTimeout) of our EOF")
}

/// One loopback TCP connection, non-blocking, driven from the fuzz thread.
struct SessionSocket {
  let fd: Int32
  /// Everything read from the session under test so far.
  var received: [UInt8] = []
  /// Whether it closed its end.
  var sawEOF = false

  init(fd: Int32) {
    self.fd = fd
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
  }

  /// Connects to 127.0.0.1:`port` from `source` (any 127/8 address: the server keeps a glitch
  /// bucket per client address, so inputs come from many); nil if the connect failed.
  static func connect(port: Int, from source: in_addr_t) -> SessionSocket? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    var local = sockaddr_in()
    local.sin_family = sa_family_t(AF_INET)
    local.sin_addr.s_addr = source.bigEndian
    var remote = sockaddr_in()
    remote.sin_family = sa_family_t(AF_INET)
    remote.sin_port = UInt16(port).bigEndian
    remote.sin_addr.s_addr = (in_addr_t(0x7F00_0001)).bigEndian
    let size = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &local) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
    }
    let connected = withUnsafePointer(to: &remote) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, size) }
    }
    guard bound == 0, connected == 0 else {
      Glibc.close(fd)
      return nil
    }
    return SessionSocket(fd: fd)
  }

  /// Writes all of `bytes`, reading whatever comes meanwhile (the peer may answer as it
  /// reads, and must not stall on a full socket); false if the peer stopped taking bytes
  /// (closed, reset) or `deadline` passed.
  mutating func write(_ bytes: [UInt8], by deadline: ContinuousClock.Instant) -> Bool {
    var offset = 0
    while offset < bytes.count {
      guard let events = wait(for: Int16(POLLIN | POLLOUT), by: deadline) else { return false }
      if events & Int16(POLLIN | POLLHUP) != 0 { readAvailable() }
      if events & Int16(POLLOUT) != 0 {
        let count = bytes[offset...].withUnsafeBytes {
          send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
        }
        if count < 0 {
          if errno == EAGAIN || errno == EINTR { continue }
          return false
        }
        offset += count
      } else if events & Int16(POLLERR | POLLHUP) != 0 {
        return false
      }
    }
    return true
  }

  /// Reads until `condition` holds for what was received, or the peer closed; false if
  /// `deadline` passed first.
  mutating func read(until condition: (SessionSocket) -> Bool, by deadline: ContinuousClock.Instant)
    -> Bool
  {
    while !condition(self) && !sawEOF {
      guard wait(for: Int16(POLLIN), by: deadline) != nil else { return false }
      readAvailable()
    }
    return true
  }

  /// Half-closes our side, then reads until the peer closes too; false if it did not by
  /// `deadline`.
  mutating func finish(by deadline: ContinuousClock.Instant) -> Bool {
    shutdown(fd, Int32(SHUT_WR))
    return read(until: { _ in false }, by: deadline) && sawEOF
  }

  func close() { Glibc.close(fd) }

  private mutating func readAvailable() {
    var buffer = [UInt8](repeating: 0, count: 64 << 10)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count > 0 {
        // What the session sent is only scanned for frames: keep the first 1 MiB.
        if received.count < 1 << 20 { received += buffer[..<count] }
        continue
      }
      if count == 0 || (errno != EAGAIN && errno != EINTR) { sawEOF = true }
      if count < 0 && errno == EINTR { continue }
      return
    }
  }

  /// The poll events, or nil once `deadline` passed.
  private func wait(for events: Int16, by deadline: ContinuousClock.Instant) -> Int16? {
    while true {
      let left = deadline - .now
      guard left > .zero else { return nil }
      var entry = pollfd(fd: fd, events: events, revents: 0)
      let milliseconds = Int32(min(left.components.seconds * 1_000 + 1, 60_000))
      let ready = poll(&entry, 1, milliseconds)
      if ready > 0 { return entry.revents }
      if ready < 0 && errno != EINTR { return nil }
    }
  }
}

/// A loopback listening socket whose connections the fuzz thread accepts.
struct SessionListener {
  let fd: Int32
  let port: Int

  init() {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    precondition(fd >= 0, "socket: \(String(cString: strerror(errno)))")
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
    var size = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, size) == 0 && Glibc.listen(fd, 64) == 0 && getsockname(fd, $0, &size) == 0
      }
    }
    precondition(bound, "listen: \(String(cString: strerror(errno)))")
    self.fd = fd
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  /// The next connection, or nil if none came by `deadline` (one that is waiting already is
  /// returned even when `deadline` has passed).
  func accept(by deadline: ContinuousClock.Instant) -> SessionSocket? {
    while true {
      let left = deadline - .now
      let milliseconds = left > .zero ? Int32(min(left.components.seconds * 1_000 + 1, 60_000)) : 0
      var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      if poll(&entry, 1, milliseconds) > 0 {
        let connection = Glibc.accept(fd, nil, nil)
        if connection >= 0 { return SessionSocket(fd: connection) }
      }
      if left <= .zero { return nil }
    }
  }
}

// MARK: Frames

/// The client connection preface (RFC 9113 §3.4).
let clientPreface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

enum FrameType: UInt8 {
  case data = 0, headers = 1, rstStream = 3, settings = 4, ping = 6, goAway = 7
  case windowUpdate = 8
}

/// One HTTP/2 frame: the 9-byte header, then `payload`.
func frame(_ type: FrameType, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = [])
  -> [UInt8]
{
  let length = UInt32(payload.count)
  return [
    UInt8(length >> 16), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type.rawValue, flags,
    UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF),
    UInt8(stream & 0xFF),
  ] + payload
}

let endStream: UInt8 = 0x1
let endHeaders: UInt8 = 0x4

/// A header field as HPACK's literal without indexing (RFC 7541 §6.2.2), name and value as
/// plain strings of fewer than 127 bytes: the simplest encoding every decoder takes.
func literalField(_ name: String, _ value: String) -> [UInt8] {
  [0x00, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
}

/// A gRPC length-prefixed message (uncompressed).
func grpcMessage(_ payload: [UInt8]) -> [UInt8] {
  let length = UInt32(payload.count)
  return [0, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF),
    UInt8(length & 0xFF)] + payload
}

/// Whether `bytes` (a session's output from its start; a client's starts with the preface)
/// hold a whole frame of `type` on `stream` with all of `flags`.
func containsFrame(
  _ bytes: [UInt8], _ type: FrameType, stream: UInt32, flags: UInt8 = 0, skipping prefix: Int = 0
) -> Bool {
  var offset = prefix
  while offset + 9 <= bytes.count {
    let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
    guard offset + 9 + length <= bytes.count else { return false }
    let id =
      UInt32(bytes[offset + 5] & 0x7F) << 24 | UInt32(bytes[offset + 6]) << 16
      | UInt32(bytes[offset + 7]) << 8 | UInt32(bytes[offset + 8])
    if bytes[offset + 3] == type.rawValue && id == stream && bytes[offset + 4] & flags == flags {
      return true
    }
    offset += 9 + length
  }
  return false
}

/// Waits for a semaphore's signal until `deadline`; false if it did not come.
func wait(_ semaphore: DispatchSemaphore, by deadline: ContinuousClock.Instant) -> Bool {
  let left = deadline - .now
  let nanoseconds = max(0, left.components.seconds * 1_000_000_000 + left.components.attoseconds / 1_000_000_000)
  return semaphore.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success
}

/// A value set on one thread and read on another after a semaphore says it is there.
final class Handoff<Value>: @unchecked Sendable {
  // @unchecked Sendable: written before `ready.signal()`, read after `ready.wait()`.
  var value: Value?
  let ready = DispatchSemaphore(value: 0)
}
